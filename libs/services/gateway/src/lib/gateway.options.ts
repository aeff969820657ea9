import { type OutboundPolicy } from '@tollgate/http';
import { type ServiceRuntimeOptions } from '@tollgate/config';

export interface GatewayOptions extends ServiceRuntimeOptions {
  adminToken: string;
  /** How long call_tool waits for the call's outcome before answering that it is still running. */
  callWaitMs: number;
  /** How often a waiting call_tool request re-reads its call as a fallback; NOTIFY wakes it as soon as any replica records the outcome. */
  callRecheckMs?: number;
  /** The absolute deadline given to each call (R6: at most 30 s). */
  callDeadlineMs: number;
  /** Signs search cursors; every gateway instance must share it. */
  cursorSecret: string;
  /** Safety-net reload of the in-memory catalog (ms), besides LISTEN/NOTIFY. */
  catalogPollMs: number;
  /** Deadline of one access-policy or policy-tool evaluation (ms). */
  policyTimeoutMs: number;
  /** Root of the per-owner policy folders the policy tools read (`<root>/<ownerId>/…`); the tools are off without it. */
  policyRoot?: string;
  /** How long a device sign-in stays open for approval (ms). */
  signInTtlMs: number;
  /** How often the retention job runs (ms; default hourly). */
  retentionIntervalMs?: number;
  /** search_tools ranking: `hybrid` (default; lexical alone while the model is unavailable), `lexical`, or `dense` (evaluation). */
  searchRanking?: 'hybrid' | 'lexical' | 'dense';
  /** OAuth sign-in: token lifetimes (s), the public base URL (else the request's own), loopback http client ID documents (development). */
  oauth?: { accessTtlS?: number; refreshTtlS?: number; publicUrl?: string; loopbackHttpClientIds?: boolean; outbound?: OutboundPolicy };
  /** Folder of the sentence-embedding model (infra/models/model.sh fetch puts it in infra/models/.data/all-minilm-l6-v2-q). */
  searchModelDir?: string;
}
