import { digestOf } from '@tollgate/contracts';
import { type Tool } from '@modelcontextprotocol/client';

/**
 * R3: the hash pins what a caller relies on — the input and output schemas
 * and the annotations — not the description, remote code or authorisation.
 */
export function contractHashOf(tool: Pick<Tool, 'inputSchema' | 'outputSchema' | 'annotations'>): string {
  return digestOf({ inputSchema: tool.inputSchema, outputSchema: tool.outputSchema ?? null, annotations: tool.annotations ?? null });
}

/** Which parts of the contract differ, for the changelog. */
export function contractChanges(before: Pick<Tool, 'inputSchema' | 'outputSchema' | 'annotations'>, after: Pick<Tool, 'inputSchema' | 'outputSchema' | 'annotations'>): string[] {
  return (['inputSchema', 'outputSchema', 'annotations'] as const).filter((k) => digestOf(before[k] ?? null) !== digestOf(after[k] ?? null));
}
