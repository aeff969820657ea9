import { Injectable } from '@nestjs/common';

/**
 * Wakes the outside payments' worker after a commit that left it work (an attempt recorded, an authorization to
 * collect). The workflows that decide such work name this, not the worker, which itself feeds their results back.
 */
@Injectable()
export class AttemptsWake {
  private listener?: () => void;

  listen(fn: () => void): void {
    this.listener = fn;
  }

  kick(): void {
    this.listener?.();
  }
}
