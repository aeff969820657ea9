import { progressNotifier } from './progress-notifier';

describe('progressNotifier (the provider\'s progress on the agent\'s request)', () => {
  it('echoes the agent\'s token and sends only increasing values', async () => {
    const sent: unknown[] = [];
    const listen = progressNotifier('tok-1', async (n) => void sent.push(n))!;
    listen({ progress: 0, total: 100, message: 'start' });
    listen({ progress: 50 });
    listen({ progress: 50 });
    listen({ progress: 20 });
    listen({ progress: 100, total: 100 });
    expect(sent).toEqual([
      { method: 'notifications/progress', params: { progressToken: 'tok-1', progress: 0, total: 100, message: 'start' } },
      { method: 'notifications/progress', params: { progressToken: 'tok-1', progress: 50 } },
      { method: 'notifications/progress', params: { progressToken: 'tok-1', progress: 100, total: 100 } },
    ]);
  });

  it('listens only when the agent sent a string or number token', () => {
    const notify = async () => undefined;
    expect(progressNotifier(undefined, notify)).toBeUndefined();
    expect(progressNotifier({ x: 1 }, notify)).toBeUndefined();
    expect(progressNotifier(7, notify)).toBeDefined();
  });

  it('a notification that cannot be written is dropped, not thrown', async () => {
    const listen = progressNotifier(1, async () => { throw new Error('stream closed'); })!;
    expect(() => listen({ progress: 1 })).not.toThrow();
    await new Promise((r) => setImmediate(r));
  });
});
