import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { type EvaluationRequest, type EvaluationResponse, evaluatePolicy } from './evaluate-policy';

/** Runs policy evaluations; `timeoutMs` bounds each one (E_TIMEOUT). */
export interface PolicyEvaluator {
  evaluate(req: EvaluationRequest, timeoutMs: number): Promise<EvaluationResponse | 'timeout'>;
  close(): Promise<void>;
}

/** In the caller's thread: for unit tests of the tool layer. A CPU-bound evaluation cannot be interrupted here. */
export class InlineEvaluator implements PolicyEvaluator {
  async evaluate(req: EvaluationRequest): Promise<EvaluationResponse> {
    return evaluatePolicy(req);
  }

  async close(): Promise<void> {}
}

interface Pending {
  id: number;
  req: EvaluationRequest;
  resolve(r: EvaluationResponse | 'timeout'): void;
  timer?: NodeJS.Timeout;
}

/**
 * Evaluates in a worker thread, one request at a time. A policy can make
 * evaluation arbitrarily slow (a backtracking `pattern` in a schema); when a
 * request passes its deadline the worker is terminated — which really stops
 * it — and a fresh one takes the rest of the queue.
 */
export class WorkerEvaluator implements PolicyEvaluator {
  private worker?: Worker;
  private readonly queue: Pending[] = [];
  private current?: Pending;
  private nextId = 1;
  private closed = false;

  evaluate(req: EvaluationRequest, timeoutMs: number): Promise<EvaluationResponse | 'timeout'> {
    if (this.closed) return Promise.resolve({ ok: false, code: 'E_INTERNAL', message: 'Tool execution failed' });
    return new Promise((resolve) => {
      const p: Pending = { id: this.nextId++, req, resolve };
      // The deadline counts from the request, queueing included.
      p.timer = setTimeout(() => this.expire(p), timeoutMs);
      this.queue.push(p);
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of [...this.queue, ...(this.current ? [this.current] : [])]) {
      clearTimeout(p.timer);
      p.resolve({ ok: false, code: 'E_INTERNAL', message: 'Tool execution failed' });
    }
    this.queue.length = 0;
    this.current = undefined;
    await this.worker?.terminate();
    this.worker = undefined;
  }

  private expire(p: Pending): void {
    if (this.current === p) {
      this.current = undefined;
      const w = this.worker;
      this.worker = undefined;
      void w?.terminate();
    } else {
      const i = this.queue.indexOf(p);
      if (i >= 0) this.queue.splice(i, 1);
    }
    p.resolve('timeout');
    this.pump();
  }

  private spawn(): Worker {
    // From source the worker is TypeScript run through the workspace's loader; from the production build, plain JS.
    const fromSource = path.extname(__filename) === '.ts';
    const w = new Worker(path.join(__dirname, `policy-evaluation.worker${fromSource ? '.ts' : '.js'}`), fromSource ? { execArgv: ['-r', '@swc-node/register'] } : {});
    w.on('message', (msg: { id: number; res: EvaluationResponse }) => {
      const p = this.current;
      if (!p || p.id !== msg.id) return;
      clearTimeout(p.timer);
      this.current = undefined;
      p.resolve(msg.res);
      this.pump();
    });
    w.on('error', () => {
      if (this.worker !== w) return;
      this.worker = undefined;
      const p = this.current;
      this.current = undefined;
      if (p) {
        clearTimeout(p.timer);
        p.resolve({ ok: false, code: 'E_INTERNAL', message: 'Tool execution failed' });
      }
      this.pump();
    });
    w.unref();
    return w;
  }

  private pump(): void {
    if (this.current || this.closed) return;
    const p = this.queue.shift();
    if (!p) return;
    this.current = p;
    this.worker ??= this.spawn();
    this.worker.postMessage({ id: p.id, req: p.req });
  }
}
