import { digestOf } from '@tollgate/contracts';
import { type Tool } from '@modelcontextprotocol/client';

/**
 * R3: the hash pins what a caller relies on — the input and output schemas
 * and the annotations — not the description, remote code or authorisation.
 */
export function contractHashOf(tool: Contract): string {
  const execution = executionOf(tool);
  // How the tool may be run (task support) is pinned too, where the provider declares it; a tool without it keeps the
  // hash it always had.
  return digestOf({ inputSchema: tool.inputSchema, outputSchema: tool.outputSchema ?? null, annotations: tool.annotations ?? null, ...(execution ? { execution } : {}) });
}

type Contract = Pick<Tool, 'inputSchema' | 'outputSchema' | 'annotations' | 'execution'>;

/** The tool's `execution` as the contract keeps it: its task support, when it says one (anything else is left out). */
export function executionOf(tool: Pick<Tool, 'execution'>): { taskSupport: 'required' | 'optional' | 'forbidden' } | undefined {
  const t = tool.execution?.taskSupport;
  return t === 'required' || t === 'optional' || t === 'forbidden' ? { taskSupport: t } : undefined;
}

/** Which parts of the contract differ, for the changelog. */
export function contractChanges(before: Contract, after: Contract): string[] {
  const part = (c: Contract, k: keyof Contract) => (k === 'execution' ? executionOf(c) : c[k]) ?? null;
  return (['inputSchema', 'outputSchema', 'annotations', 'execution'] as const).filter((k) => digestOf(part(before, k)) !== digestOf(part(after, k)));
}
