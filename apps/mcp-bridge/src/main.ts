/**
 * tollgate-mcp: the local MCP server for desktop clients (G2). stdio to the
 * client, Streamable HTTP to a gateway URL; signs in with a device approval.
 *
 *   tollgate-mcp --gateway http://127.0.0.1:3000 --url demo            (the stdio server a client starts)
 *   tollgate-mcp sign-in --gateway http://127.0.0.1:3000 --url demo    (the same sign-in from a terminal)
 */
import os from 'node:os';
import path from 'node:path';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { Command } from 'commander';
import { BridgeServer } from './bridge-server';
import { ConfigStore } from './config-store';
import { SignInFlow } from './sign-in-flow';

interface Options {
  gateway: string;
  url: string;
  configDir: string;
  deviceName: string;
}

const withCommon = (c: Command) =>
  c.requiredOption('--gateway <base>', 'the gateway\'s address, e.g. http://127.0.0.1:3000')
    .requiredOption('--url <slug>', 'the MCP URL to use: /mcp/<slug>')
    .option('--config-dir <dir>', 'where the credential and the sign-in lock are kept', process.env['TOLLGATE_CONFIG_DIR'] ?? path.join(os.homedir(), '.config', 'tollgate'))
    .option('--device-name <name>', 'how this device is named on the approval page', `${os.userInfo().username}@${os.hostname()}`);

const terminalCommand = (o: Options) => `tollgate-mcp sign-in --gateway ${o.gateway} --url ${o.url}`;
const target = (o: Options) => ({ gateway: o.gateway.replace(/\/+$/, ''), slug: o.url, deviceName: o.deviceName });

const program = new Command('tollgate-mcp').description('Tollgate\'s MCP tools for desktop MCP clients, over stdio.');
withCommon(program.command('serve', { isDefault: true }).description('the stdio MCP server a desktop client starts (the default)')).action(async (o: Options) => {
  const bridge = new BridgeServer(target(o), new ConfigStore(o.configDir), terminalCommand(o));
  await bridge.resume();
  const connection = serveStdio(() => bridge.createServer());
  const stop = async () => {
    await connection.close();
    await bridge.close();
    process.exit(0);
  };
  process.stdin.on('end', () => void stop());
  process.on('SIGTERM', () => void stop());
});

withCommon(program.command('sign-in').description('sign in from a terminal: prints the approval link and waits')).action(async (o: Options) => {
  const flow = new SignInFlow(target(o), new ConfigStore(o.configDir), () => undefined);
  const started = await flow.start();
  if (started.kind === 'other-window') {
    process.stdout.write(`Another window is already signing in. Approve it there (code ${started.userCode}).\n`);
    process.exit(1);
  }
  process.stdout.write(`Open this link and approve this device:\n  ${started.approvalUrl}\nCode: ${started.userCode}\nWaiting for the approval...\n`);
  const end = await flow.waitForOutcome();
  process.stdout.write(end.kind === 'connected' ? 'Signed in. Restart your MCP client to see the tools.\n' : 'The sign-in ended without approval. Run this command again.\n');
  process.exit(end.kind === 'connected' ? 0 : 1);
});

program.parseAsync(process.argv).catch((e: unknown) => {
  process.stderr.write(`tollgate-mcp: ${e instanceof Error ? e.message : 'failed'}\n`);
  process.exit(1);
});
