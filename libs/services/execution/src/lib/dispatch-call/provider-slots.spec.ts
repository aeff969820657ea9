/** Per-provider concurrency (B4): a provider at its bound holds up its own calls only, in order, until their deadline. */
import { ProviderSlots } from './provider-slots';

describe('ProviderSlots', () => {
  const later = () => Date.now() + 10_000;

  it('gives a provider its bound at once; the next call waits for a release, in arrival order', async () => {
    const slots = new ProviderSlots(() => 2);
    const [a, b] = [await slots.acquire('slow', later()), await slots.acquire('slow', later())];
    const order: string[] = [];
    const c = slots.acquire('slow', later()).then((r) => (order.push('c'), r));
    const d = slots.acquire('slow', later()).then((r) => (order.push('d'), r));
    await new Promise((r) => setImmediate(r));
    expect([slots.inUse('slow'), slots.queued('slow'), order]).toEqual([2, 2, []]);
    a!();
    a!(); // a second release of one slot frees nothing more
    await c;
    expect([slots.inUse('slow'), slots.queued('slow'), order]).toEqual([2, 1, ['c']]);
    b!();
    await d;
    expect(order).toEqual(['c', 'd']);
  });

  it('never makes another provider wait', async () => {
    const slots = new ProviderSlots((id) => (id === 'slow' ? 1 : 5));
    await slots.acquire('slow', later());
    void slots.acquire('slow', later());
    const other = await slots.acquire('fast', later());
    expect(other).toBeInstanceOf(Function);
    expect([slots.inUse('fast'), slots.queued('fast')]).toEqual([1, 0]);
  });

  it('a call whose deadline passes while waiting gets no slot and leaves the queue', async () => {
    const slots = new ProviderSlots(() => 1);
    const held = await slots.acquire('slow', later());
    expect(await slots.acquire('slow', Date.now() + 20)).toBeUndefined();
    expect(slots.queued('slow')).toBe(0);
    held!();
    expect(slots.inUse('slow')).toBe(0);
  });
});
