/**
 * How many calls one provider gets at once from this process. A provider at its bound makes its own calls wait their
 * turn (first come, first served) until their deadline — never anyone else's: every provider has its own slots, and
 * nothing waits for a provider it does not call. A call whose deadline passes while waiting was never sent.
 */
export class ProviderSlots {
  private readonly busy = new Map<string, number>();
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(private readonly limitOf: (providerId: string) => number) {}

  /** A slot (its release function), or undefined when none came free before `deadlineAt` (epoch ms). */
  acquire(providerId: string, deadlineAt: number): Promise<(() => void) | undefined> {
    if (this.inUse(providerId) < this.limitOf(providerId)) return Promise.resolve(this.take(providerId));
    return new Promise((resolve) => {
      const queue = this.waiting.get(providerId) ?? [];
      this.waiting.set(providerId, queue);
      const wake = () => {
        clearTimeout(timer);
        resolve(this.take(providerId));
      };
      const timer = setTimeout(() => {
        queue.splice(queue.indexOf(wake), 1);
        resolve(undefined);
      }, Math.max(0, deadlineAt - Date.now()));
      queue.push(wake);
    });
  }

  inUse(providerId: string): number {
    return this.busy.get(providerId) ?? 0;
  }

  /** Calls waiting for a slot of this provider. */
  queued(providerId: string): number {
    return this.waiting.get(providerId)?.length ?? 0;
  }

  private take(providerId: string): () => void {
    this.busy.set(providerId, this.inUse(providerId) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.busy.set(providerId, this.inUse(providerId) - 1);
      this.waiting.get(providerId)?.shift()?.();
    };
  }
}
