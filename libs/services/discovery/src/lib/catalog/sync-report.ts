import { type RefusedTool } from '@tollgate/mcp-runtime';

/** What one sync of a provider found: its tools (new, unchanged, waiting for approval), those refused and removed. */
export interface SyncReport {
  providerId: string;
  ok: boolean;
  error?: string;
  pages?: number;
  /** `listingRefused`: why the provider's own listing of the tool was refused (a malformed price), naming the field. */
  tools: { name: string; version: number; contractHash: string; state: 'new' | 'unchanged' | 'pending_approval'; listingRefused?: string }[];
  refused: RefusedTool[];
  removed: string[];
  syncedAt: string;
}
