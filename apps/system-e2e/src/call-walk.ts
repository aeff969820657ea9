import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client as PgClient } from 'pg';
import { waitFor, WORKSPACE_ROOT } from '@tollgate/testing';
import { callThrough, connectAgent, errorOf, receiptOf, startEmbeddedSystem } from './agent-client';

/** How long the process is left idle before the call and after it: the gaps that bound the call in V8's log. */
const QUIET_MS = 3_000;

/** One function event of V8's log (`--log-function-events`): when a function of a script was parsed or compiled. */
interface FunctionEvent { file: string; kind: string; name: string }

/**
 * Runs one paid call on the embedded host (`npm start`, the demo's priced `reverse_text`) with V8 logging every
 * function it compiles, in order, until the call settled and its hold was captured. A function is compiled when it is
 * first entered, so the project files that compile a function during the call, in the order of their first, are the
 * files the call enters — beyond what booting and listing tools ran before.
 */
export async function recordPaidCall(logFile: string): Promise<FunctionEvent[]> {
  const flags = ['--log-function-events', `--logfile=${logFile}`, '--no-logfile-per-isolate', '--no-flush-bytecode', '-r', path.join(__dirname, 'walk-marks.cjs')];
  const system = await startEmbeddedSystem('walk', { DEMO_MONEY: 'true', SETTLEMENT_VERIFICATION_WINDOW_MS: '200' }, flags);
  const agent = await connectAgent(system.demo['mcpUrl']!, system.demo['credential']!);
  const db = new PgClient({ connectionString: system.pgUrl });
  await db.connect();
  try {
    await waitFor('the priced tool in the catalog', async () => {
      const r = (await agent.callTool({ name: 'get_tool', arguments: { name: 'reverse_text' } })) as CallToolResult;
      return !errorOf(r) && (r.structuredContent as { price: unknown }).price !== null;
    }, 60_000, 300);
    await sleep(QUIET_MS);
    await mark(system.process.child.pid!);
    const paid = await callThrough(agent, 'reverse_text', { text: 'walk' }, 'walk-1');
    const intentId = receiptOf(paid)!.intentId;
    await waitFor('the hold captured and booked in the journal', async () =>
      (await db.query(`SELECT 1 FROM ledger.journal_entry WHERE intent_id = $1 AND kind = 'capture'`, [intentId])).rowCount! > 0, 60_000, 200);
    await mark(system.process.child.pid!);
  } finally {
    await db.end();
    await agent.close();
    await system.stop();
  }
  return functionEvents(readFileSync(logFile, 'utf8'));
}

/** Marks the moment in V8's log (walk-marks.cjs), and lets the mark be taken before going on. */
async function mark(pid: number): Promise<void> {
  process.kill(pid, 'SIGWINCH');
  await sleep(200);
}

/** V8's function events of this workspace's own files (not its dependencies, not the sample providers). */
export function functionEvents(log: string): FunctionEvent[] {
  const scripts = new Map<string, string>();
  const events: FunctionEvent[] = [];
  for (const line of log.split('\n')) {
    const f = line.split(',');
    if (f[0] === 'script-details' && f[2]?.startsWith(WORKSPACE_ROOT + '/')) scripts.set(f[1]!, path.relative(WORKSPACE_ROOT, f[2]));
    if (f[0] === 'function' && scripts.has(f[2]!)) events.push({ file: scripts.get(f[2]!)!, kind: f[1]!, name: f.slice(7).join(',') });
  }
  return events.filter((e) => !e.file.includes('node_modules') && !e.file.startsWith('libs/services/sample-providers/'));
}

/**
 * The files first entered between the two marks, in the order of their first function event. A read of another
 * module's export is not an entry: the compiler (SWC, CommonJS) makes each export a getter of its module (`get X`, or
 * a bare `get`), so reading a constant or a function first passed along would otherwise count its file as entered
 * though none of its own code ran.
 */
export function walkOf(events: readonly FunctionEvent[]): string[] {
  // A function is entered for the first time when V8 compiles it lazily (`interpreter`) or, compiled eagerly, logs its
  // `first-execution`; its other events are parsing at load and tiering up once hot.
  const firsts = events.filter((e) => (e.kind === 'interpreter' || e.kind.startsWith('first-execution')) && !isExportGetter(e));
  const [start, end] = [firsts.findIndex((e) => e.name === 'walkStart'), firsts.findIndex((e) => e.name === 'walkEnd')];
  if (start < 0 || end < start) throw new Error('the walk\'s marks are not in V8\'s log');
  return [...new Set(firsts.slice(start + 1, end).map((e) => e.file))].filter((f) => !f.endsWith('walk-marks.cjs'));
}

const sources = new Map<string, string>();
/** The compiler's getter of an export of the file (`get X` where the file exports X), not a getter the file declares. */
export function isExportGetter(e: Pick<FunctionEvent, 'file' | 'name'>): boolean {
  if (e.name === 'get') return true;
  const m = /^get ([A-Za-z_$][\w$]*)$/.exec(e.name);
  if (!m) return false;
  if (!sources.has(e.file)) sources.set(e.file, readFileSync(path.join(WORKSPACE_ROOT, e.file), 'utf8'));
  const exported = new RegExp(`^export (?:declare |abstract |async )*(?:const|let|function\\*?|class|enum) ${m[1]!.replace(/\$/g, '\\$')}\\b`, 'm');
  return exported.test(sources.get(e.file)!);
}

/** The README whose walk this is, and the markers around the generated part. */
export const WALK_README = path.join(WORKSPACE_ROOT, 'libs/call-life/README.md');
const [BEGIN, END] = ['<!-- walk:begin (generated by apps/system-e2e/src/call-walk.e2e.test.ts) -->', '<!-- walk:end -->'];

/** The files the README's walk lists, in its order. */
export function walkInReadme(readme: string): string[] {
  const at = readme.indexOf(BEGIN);
  const part = at < 0 ? '' : readme.slice(at, readme.indexOf(END, at));
  return [...part.matchAll(/^\d+\. `([^`]+)`/gm)].map((m) => m[1]!);
}

/** Writes this walk into the README (WRITE_WALK=1). */
export function writeWalk(walk: readonly string[]): void {
  const readme = readFileSync(WALK_README, 'utf8');
  const [head, rest] = [readme.slice(0, readme.indexOf(BEGIN)), readme.slice(readme.indexOf(END) + END.length)];
  const list = walk.map((f, i) => `${i + 1}. \`${f}\``).join('\n');
  writeFileSync(WALK_README, `${head}${BEGIN}\n\n${walk.length} files:\n\n${list}\n\n${END}${rest}`);
}

/**
 * Files of the README's walk further from their recorded place than `slack`: the process's own clocks (the outbox
 * relay's, the reconciler's) enter a few files a little earlier or later from one run to the next.
 */
export function displaced(written: readonly string[], walk: readonly string[], slack: number): string[] {
  return written.filter((f, i) => walk.includes(f) && Math.abs(walk.indexOf(f) - i) > slack);
}
