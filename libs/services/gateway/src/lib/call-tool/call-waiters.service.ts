import { Injectable } from '@nestjs/common';

/**
 * Wakes a call_tool request waiting for its call's outcome as soon as this
 * instance's consumer committed it. Another gateway instance may have
 * consumed it instead, so waiters also re-read the call row periodically.
 */
@Injectable()
export class CallWaiters {
  private readonly waiting = new Map<string, Set<() => void>>();

  notify(intentId: string): void {
    for (const wake of this.waiting.get(intentId) ?? []) wake();
  }

  /** Resolves on the next notify for `intentId`, or after `ms`. */
  next(intentId: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const set = this.waiting.get(intentId) ?? new Set();
      this.waiting.set(intentId, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0) this.waiting.delete(intentId);
        resolve();
      };
      const timer = setTimeout(done, ms);
      set.add(done);
    });
  }
}
