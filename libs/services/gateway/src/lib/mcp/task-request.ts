import { CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { declaresTasks } from '../call-tasks/call-task';
import { TASKS_EXTENSION } from '../call-tool/tasks-extension';

const TASK_METHODS = new Set(['tasks/get', 'tasks/cancel', 'tasks/update']);

export type TaskMethod = 'tasks/get' | 'tasks/cancel' | 'tasks/update';

/** A tasks-extension request the gateway answers itself, or the protocol error it gets instead. */
export type TaskRequest =
  | { ok: true; id: string | number; method: TaskMethod; taskId: string }
  | { ok: false; id: string | number | null; status: number; error: { code: number; message: string; data?: Record<string, unknown> } };

type Headers = Record<string, string | string[] | undefined>;

/**
 * The tasks extension's methods on a 2026-07-28 request. The SDK v2 (2.4.0) routes `tasks/*`
 * only in the 2025-11-25 era it first defined them in, so the gateway answers them here, with the revision's rules:
 * `Mcp-Method` must name the method and `Mcp-Name` the task (-32020, HTTP 400), the client must declare the extension
 * (-32021, HTTP 400), `taskId` must be a string (-32602). A request without the 2026-07-28 envelope is not one of
 * these (a 2025-era `tasks/*` gets the protocol's method-not-found from the SDK).
 */
export function taskRequestOf(body: unknown, headers: Headers): TaskRequest | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { id, method, params } = body as { id?: unknown; method?: unknown; params?: { taskId?: unknown; _meta?: Record<string, unknown> } };
  if (typeof method !== 'string' || !TASK_METHODS.has(method) || (typeof id !== 'string' && typeof id !== 'number')) return undefined;
  const meta = params?._meta;
  if (!meta || typeof meta !== 'object' || typeof meta[PROTOCOL_VERSION_META_KEY] !== 'string') return undefined;
  const taskId = params?.taskId;
  if (typeof taskId !== 'string' || taskId.length === 0 || taskId.length > 200) {
    return { ok: false, id, status: 200, error: { code: -32602, message: 'Invalid params: taskId must be the id a task was created with.' } };
  }
  const header = (name: string) => (Array.isArray(headers[name]) ? headers[name]![0] : headers[name]) as string | undefined;
  if (header('mcp-method') !== method || header('mcp-name') !== taskId) {
    return { ok: false, id, status: 400, error: { code: -32020, message: 'Bad Request: the Mcp-Method and Mcp-Name headers must name the method and the taskId of the body.' } };
  }
  if (!declaresTasks(meta[CLIENT_CAPABILITIES_META_KEY])) {
    return { ok: false, id, status: 400, error: { code: -32021, message: 'Missing required client capability', data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } } } };
  }
  return { ok: true, id, method: method as TaskMethod, taskId };
}
