import { type DeliveredMessage, type SubscribeOptions } from './event-transport';
import { isVisible, type LogSnapshot } from './log-snapshot';

// A consumer group of the PostgreSQL log: where it stands, what waits for it, and when it reads next (no I/O here).

/** The events one committed transaction wrote, as handed on in process (`at`: when). */
export interface HandOff { txid: bigint; messages: DeliveredMessage[]; at: number }

export interface Group {
  options: SubscribeOptions;
  topics: Set<string>;
  batchSize: number;
  /** Every row of every transaction visible in this snapshot has been handled. */
  position: LogSnapshot;
  saved: string;
  /** A read in progress over several batches: the snapshot it reads up to and the last row id handled. */
  window?: { snapshot: LogSnapshot; afterId: bigint };
  /** Transactions handed on in process and handled, not yet covered by `position`. */
  delivered: Set<bigint>;
  /** Rows (offsets) this group applied inside their producer's transaction (`applyInline`), not to be handed on. */
  inlineApplied: Set<string>;
  queue: HandOff[];
  /** A notification, the poll, a restored connection or a full batch asks for a read. */
  readWanted: boolean;
  lastReadAt: number;
  stopped: boolean;
  wake?: () => void;
}

/** When a group reads: after a hand-off, soon (`settleMs`) to fold it into its position; otherwise on the poll. */
export interface LogTiming { settleMs: number; pollIntervalMs: number }

/**
 * How much longer the handed-on messages may wait (`deferrable`): while every queued message is of a deferrable
 * topic, until the oldest has waited `upToMs`; 0 once anything else is queued.
 */
export function deferralMs(group: Group): number {
  const d = group.options.deferrable;
  if (!d || group.queue.length === 0) return 0;
  if (group.queue.some((h) => h.messages.some((m) => !d.topics.includes(m.topic)))) return 0;
  return group.queue[0]!.at + d.upToMs - Date.now();
}

/** A read is asked for: a notification, a restored connection or a full batch wants one, or a window is open. */
export function readAsked(group: Group): boolean {
  return group.readWanted || group.window !== undefined;
}

/** A read is due: asked for, or its time come (the poll, or the settle after a hand-off). */
export function readDue(group: Group, timing: LogTiming): boolean {
  return readAsked(group) || nextReadInMs(group, timing) <= 0;
}

/** A read folds handed-on transactions into the position soon after; with nothing handed on, the poll is the fallback. */
export function nextReadInMs(group: Group, timing: LogTiming): number {
  const every = group.delivered.size > 0 ? timing.settleMs : timing.pollIntervalMs;
  return group.lastReadAt + every - Date.now();
}

/** Moves the position to a snapshot whose rows are all handled; what it covers is forgotten. */
export function advance(group: Group, snapshot: LogSnapshot): void {
  group.position = snapshot;
  group.window = undefined;
  for (const txid of group.delivered) if (isVisible(txid, snapshot)) group.delivered.delete(txid);
}

/** Whether the transaction's rows were already handled by this group (or are being, in the current window). */
export function covers(group: Group, txid: bigint): boolean {
  return isVisible(txid, group.position) || group.delivered.has(txid) || (group.window !== undefined && isVisible(txid, group.window.snapshot));
}

/** Asks the group for a read and wakes it. */
export function wantRead(group: Group): void {
  group.readWanted = true;
  group.wake?.();
}

/** Until `ms` pass or something wakes the group (a hand-off, a notification, a stop); a deferred queue sleeps too. */
export function sleep(group: Group, ms: number): Promise<void> {
  if (group.stopped || (group.queue.length > 0 && deferralMs(group) <= 0) || group.readWanted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, Math.max(0, ms));
    function done() {
      clearTimeout(timer);
      group.wake = undefined;
      resolve();
    }
    group.wake = done;
  });
}

/** A group starting at `start`, asking for a first read. */
export function newGroup(options: SubscribeOptions, start: LogSnapshot, batchSize: number): Group {
  return {
    options, topics: new Set(options.topics), batchSize, position: start, saved: start.text, delivered: new Set(), inlineApplied: new Set(), queue: [], readWanted: true, lastReadAt: 0, stopped: false,
  };
}

/** Handed-on transactions remembered as applied inside their producer; past this the memory is dropped (a re-delivery is absorbed). */
const MAX_INLINE_REMEMBERED = 20_000;

/** Marks messages a group applied inside their producer's transaction (`appendAtCommit`): they are not handed on again. */
export function rememberInline(g: Group, applied: readonly DeliveredMessage[]): void {
  if (g.inlineApplied.size > MAX_INLINE_REMEMBERED) g.inlineApplied.clear(); // left by producers that rolled back
  for (const m of applied) g.inlineApplied.add(m.offset);
}

/**
 * A committed transaction's messages for one group, queued without those it applied inline (already handled). An
 * entry left empty is still queued: the transaction counts as handled only once every entry of it was — one of its
 * appends may have been applied inline and another not.
 */
export function handOnTo(g: Group, txid: bigint, delivered: readonly DeliveredMessage[]): void {
  const ours = delivered.filter((m) => g.topics.has(m.topic));
  if (ours.length === 0 || g.stopped) return;
  const mine = ours.filter((m) => !g.inlineApplied.delete(m.offset));
  g.queue.push({ txid, messages: mine, at: Date.now() });
  g.wake?.();
}
