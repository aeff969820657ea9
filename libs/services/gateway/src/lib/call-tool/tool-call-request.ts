import { type PolicyInForce } from '../access-policy/access-policy.service';
import { type CallerIdentity } from '../authenticate/authenticate.usecase';
import { type UrlProfile } from '../catalog/catalog-access';
import { type ProgressListener } from './progress-stream';

/** How the answer of a call is awaited. */
export interface CallOptions {
  /** The agent asked for progress (a progressToken): it hears the provider's while the request waits. */
  onProgress?: ProgressListener;
  /** The agent takes tasks (2026-07-28 extension): a tool its provider runs as a task is answered as one at once. */
  tasks?: boolean;
}

/**
 * One agent's tool call as the MCP surface hands it over: who (from the credential), through which URL, the tool and
 * its arguments, the request's `_meta` (operation key, x402 payment), the access policies in force, and how the answer
 * is awaited (progress, tasks).
 */
export interface ToolCallRequest extends CallOptions {
  caller: CallerIdentity;
  profile: UrlProfile;
  name: string;
  args: Record<string, unknown>;
  meta?: Record<string, unknown>;
  policies?: readonly PolicyInForce[];
}
