#!/usr/bin/env node
// Runs the TypeScript entry point directly (the workspace runs its sources through @swc-node/register).
require('@swc-node/register');
require('../src/main.ts');
