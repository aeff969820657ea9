import { type RefusedTool } from '@tollgate/mcp-runtime';

/** What one sync of a provider found: its tools (new, unchanged, waiting for approval), those refused and removed. */
export interface SyncReport {
  providerId: string;
  ok: boolean;
  error?: string;
  pages?: number;
  tools: { name: string; version: number; contractHash: string; state: 'new' | 'unchanged' | 'pending_approval' }[];
  refused: RefusedTool[];
  removed: string[];
  syncedAt: string;
}
