export * from './lib/infra';
export * from './lib/wait-for';
export * from './lib/processes';
export * from './lib/distributed-system';
export * from './lib/x402-signer';
