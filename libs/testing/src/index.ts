export * from './lib/infra';
export * from './lib/wait-for';
export * from './lib/processes';
export * from './lib/distributed-system';
export * from './lib/x402-signer';
export * from './lib/search-eval/search-eval';
export * from './lib/search-eval/search-eval.queries';
export * from './lib/search-eval/eval-catalog.data';
