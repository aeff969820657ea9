export * from './helm';
export * from './kube-schemas';
export * from './manifest-rules';
export * from './compose-rules';
export * from './dockerfile-rules';
