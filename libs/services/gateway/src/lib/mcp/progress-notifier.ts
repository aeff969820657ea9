import { type ProgressListener } from '../call-tool/progress-stream';

type Notify = (notification: { method: 'notifications/progress'; params: Record<string, unknown> }) => Promise<void>;

/**
 * The agent's `_meta.progressToken` made into a listener of the provider's progress: each notice becomes a
 * `notifications/progress` on the agent's own request, echoing its token. Only increasing values go out (MCP requires
 * it; a redelivered notice repeats one); a notification that cannot be written is only a notification lost.
 * No token (or not a string or number): the agent did not ask, and nothing listens.
 */
export function progressNotifier(token: unknown, notify: Notify): ProgressListener | undefined {
  if (typeof token !== 'string' && typeof token !== 'number') return undefined;
  let last = -Infinity;
  return ({ progress, total, message }) => {
    if (!(progress > last)) return;
    last = progress;
    const params = { progressToken: token, progress, ...(total !== undefined ? { total } : {}), ...(message !== undefined ? { message } : {}) };
    void notify({ method: 'notifications/progress', params }).catch(() => undefined);
  };
}
