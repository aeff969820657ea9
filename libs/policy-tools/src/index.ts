export * from './lib/policy-tool-error';
export * from './lib/policy-store';
export * from './lib/evaluate-policy';
export * from './lib/policy-evaluator';
export * from './lib/policy-tools.service';
export * from './lib/policy-mcp.server';
