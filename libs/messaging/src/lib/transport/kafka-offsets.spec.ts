import { type Consumer } from 'kafkajs';
import pino from 'pino';
import { OffsetCommitter } from './kafka-offsets';

type Committed = { topic: string; partition: number; offset: string }[];

function committerWith(commitOffsets: (offsets: Committed) => Promise<void>, intervalMs = 60_000) {
  return new OffsetCommitter({ commitOffsets } as unknown as Consumer, intervalMs, pino({ level: 'silent' }));
}

describe('OffsetCommitter: a member commits the offsets it handled periodically, never ahead of its work', () => {
  it('commits the position after the last handled offset of each partition, once', async () => {
    const commits: Committed[] = [];
    const c = committerWith(async (o) => void commits.push(o));
    c.handled('t.a', 0, '4');
    c.handled('t.a', 0, '9');
    c.handled('t.b', 2, '0');
    await c.commit();
    await c.commit(); // nothing new: no second commit
    c.close();
    expect(commits).toEqual([[{ topic: 't.a', partition: 0, offset: '10' }, { topic: 't.b', partition: 2, offset: '1' }]]);
  });

  it('is due only once the interval has passed with something pending', () => {
    const c = committerWith(async () => undefined, 0);
    expect(c.due()).toBe(false);
    c.handled('t', 0, '1');
    expect(c.due()).toBe(true);
    c.close();
    const slow = committerWith(async () => undefined, 60_000);
    slow.handled('t', 0, '1');
    expect(slow.due()).toBe(false);
    slow.close();
  });

  it('after a rebalance forgets the partitions another member now owns', async () => {
    const commits: Committed[] = [];
    const c = committerWith(async (o) => void commits.push(o));
    c.handled('t', 0, '5');
    c.handled('t', 1, '7');
    c.keepOnly({ t: [1] });
    await c.commit();
    c.close();
    expect(commits).toEqual([[{ topic: 't', partition: 1, offset: '8' }]]);
  });

  it('tries a failed commit again with the next one, without moving a partition back', async () => {
    const commits: Committed[] = [];
    let fail = true;
    const c = committerWith(async (o) => {
      if (fail) throw new Error('REBALANCE_IN_PROGRESS');
      commits.push(o);
    });
    c.handled('t', 0, '5');
    c.handled('t', 1, '2');
    await c.commit();
    fail = false;
    c.handled('t', 0, '6'); // newer than the failed one: kept
    await c.commit();
    c.close();
    expect(commits).toEqual([[{ topic: 't', partition: 0, offset: '7' }, { topic: 't', partition: 1, offset: '3' }]]);
  });
});
