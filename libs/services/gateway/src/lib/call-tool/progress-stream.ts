import { type CallProgressedPayload } from '@tollgate/contracts';

/** A provider's progress notice as the waiting request hears it. */
export type ProgressNotice = Omit<CallProgressedPayload, 'intentId'>;

/** What the agent is told: the provider's values, in order. */
export type ProgressListener = (p: Omit<CallProgressedPayload, 'intentId' | 'attempt' | 'ended'>) => void;

/**
 * How long an answered request waits for the closing notice of the attempt that answered (execution publishes it after
 * the attempt's notices and before it reports the outcome, so it is normally there already or milliseconds away; a
 * closing notice lost with a broker outage costs this much, once).
 */
export const PROGRESS_SETTLE_MS = 1_000;

/**
 * The provider's progress on one waiting request. Notices and the call's answer travel different ways (the answer is
 * folded with the result; a notice is consumed on its own, in embedded mode and over Kafka alike), so the answer can
 * overtake the last notices. Each attempt ends with a closing notice published after all of its others: the request
 * answers once the answering attempt's closing notice arrived, so the agent hears every notice before the result.
 */
export class ProgressStream {
  /** The highest attempt whose closing notice arrived. */
  private endedUpTo = 0;
  private readonly waiting = new Set<() => void>();

  constructor(private readonly relay: ProgressListener) {}

  hear(notice: ProgressNotice): void {
    if (notice.ended) {
      this.endedUpTo = Math.max(this.endedUpTo, notice.attempt);
      for (const wake of [...this.waiting]) wake();
      return;
    }
    const { progress, total, message } = notice;
    this.relay({ progress, ...(total !== undefined ? { total } : {}), ...(message !== undefined ? { message } : {}) });
  }

  /** Resolves once attempt `attempt` (or a later one) closed its notices, or after `ms`. Attempt 0 (none sent): at once. */
  endOf(attempt: number, ms: number = PROGRESS_SETTLE_MS): Promise<void> {
    if (attempt <= this.endedUpTo) return Promise.resolve();
    return new Promise((resolve) => {
      const settle = () => {
        clearTimeout(timer);
        this.waiting.delete(check);
        resolve();
      };
      const check = () => attempt <= this.endedUpTo && settle();
      const timer = setTimeout(settle, ms);
      this.waiting.add(check);
    });
  }
}
