import { CHECK_TIMEOUT_MS, HealthRegistry } from './health-registry.service';

/** R: readiness answers at once when a dependency hangs (a database whose packets are dropped). */
describe('HealthRegistry', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('counts a check that hangs as not ready, and a figure that hangs as unknown, after CHECK_TIMEOUT_MS', async () => {
    const h = new HealthRegistry();
    h.register({ name: 'fine', check: async () => true });
    h.register({ name: 'hangs', check: () => new Promise<boolean>(() => undefined) });
    h.registerFigure({ name: 'stuck', read: () => new Promise<number>(() => undefined) });
    const answer = h.evaluate();
    await jest.advanceTimersByTimeAsync(CHECK_TIMEOUT_MS);
    expect(await answer).toMatchObject({ ready: false, checks: { fine: true, hangs: false }, figures: { stuck: null } });
  });

  it('is ready when every check answers true in time; a failing check is not ready', async () => {
    const h = new HealthRegistry();
    h.register({ name: 'a', check: async () => true });
    expect((await h.evaluate()).ready).toBe(true);
    h.register({ name: 'b', check: () => Promise.reject(new Error('down')) });
    expect(await h.evaluate()).toMatchObject({ ready: false, checks: { a: true, b: false } });
  });
});
