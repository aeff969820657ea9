// @ts-check
/** @typedef {import('jest').Config} Config */

// Three tiers (STYLE.md): unit specs beside the code (no infrastructure),
// integration tests against the real PostgreSQL and Kafka, and end-to-end
// tests that start the services as separate processes and drive them as
// users do. `npm test` runs all three through tools/scripts/test-all.sh.
/** @type {Config['transform']} */
const transform = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.base.json' }],
};
const common = {
  rootDir: __dirname,
  testEnvironment: 'node',
  transform,
  moduleFileExtensions: ['ts', 'js', 'json'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  // The production build (npm run build) mirrors the workspace's packages in dist/; jest resolves the sources only.
  modulePathIgnorePatterns: ['<rootDir>/dist/'],
  setupFiles: ['reflect-metadata'],
};

/** @type {Config} */
const config = {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs,tools}/**/*.spec.ts'] },
    // Medium: one service's use cases against the real PostgreSQL with its migrations; no Kafka, no HTTP.
    { ...common, displayName: 'medium', testMatch: ['<rootDir>/{apps,libs,tools}/**/*.medium.test.ts'], slowTestThreshold: 30 },
    { ...common, displayName: 'integration', testMatch: ['<rootDir>/{apps,libs,tools}/**/*.integration.test.ts'], slowTestThreshold: 60 },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/{apps,libs,tools}/**/*.e2e.test.ts'], slowTestThreshold: 120 },
  ],
};
module.exports = config;
