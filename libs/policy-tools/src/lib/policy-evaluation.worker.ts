import { parentPort } from 'node:worker_threads';
import { type EvaluationRequest, evaluatePolicy } from './evaluate-policy';

// The worker side of WorkerEvaluator: evaluate and answer, one message at a time.
parentPort?.on('message', (msg: { id: number; req: EvaluationRequest }) => {
  parentPort?.postMessage({ id: msg.id, res: evaluatePolicy(msg.req) });
});
