#!/usr/bin/env node
// Whichever `node` started it, it runs on the project's Node (tools/scripts/project-node.js).
require('../../../tools/scripts/project-node.js').ensureProjectNode();
// Runs the TypeScript entry point directly (the workspace runs its sources through @swc-node/register).
require('@swc-node/register');
require('../src/main.ts');
