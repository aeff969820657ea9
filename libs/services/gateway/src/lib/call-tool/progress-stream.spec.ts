import { ProgressStream } from './progress-stream';

describe('ProgressStream (the agent hears every notice before the result)', () => {
  it('relays notices without their attempt, and never a closing notice', () => {
    const heard: unknown[] = [];
    const stream = new ProgressStream((p) => heard.push(p));
    stream.hear({ attempt: 1, progress: 0, total: 2, message: 'start' });
    stream.hear({ attempt: 1, progress: 2 });
    stream.hear({ attempt: 1, progress: 2, ended: true });
    expect(heard).toEqual([{ progress: 0, total: 2, message: 'start' }, { progress: 2 }]);
  });

  it('holds the answer until the answering attempt closed its notices', async () => {
    const stream = new ProgressStream(() => undefined);
    let answered = false;
    const settled = stream.endOf(2, 5_000).then(() => (answered = true));
    stream.hear({ attempt: 1, progress: 0, ended: true });
    await new Promise((r) => setTimeout(r, 20));
    expect(answered).toBe(false); // the earlier attempt's closing notice is not this one's
    stream.hear({ attempt: 2, progress: 50, ended: true });
    await settled;
    expect(answered).toBe(true);
  });

  it('answers at once once closed, and after the bound when the closing notice is lost', async () => {
    const stream = new ProgressStream(() => undefined);
    stream.hear({ attempt: 1, progress: 0, ended: true });
    await expect(stream.endOf(1, 60_000)).resolves.toBeUndefined();
    await expect(stream.endOf(0, 60_000)).resolves.toBeUndefined();
    const started = Date.now();
    await stream.endOf(2, 50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });
});
