/**
 * tollgate-policy-mcp: the self-verification policy tools (source 001) as a
 * stdio MCP server. `--policy-root DIR` is the only place policies are read
 * from. stdout carries JSON-RPC only; diagnostics go to stderr.
 */
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { Command, InvalidArgumentError } from 'commander';
import { statSync } from 'node:fs';
import path from 'node:path';
import { createPolicyMcpServer, PolicyToolsService, WorkerEvaluator } from '@tollgate/policy-tools';

const program = new Command('tollgate-policy-mcp')
  .description('Policy self-verification tools (assay_check_args, assay_check_sequence, assay_policy_decide) over stdio MCP.')
  .requiredOption('--policy-root <dir>', 'directory holding the policy files; paths outside it are refused', (dir: string) => {
    const abs = path.resolve(dir);
    if (!statSync(abs, { throwIfNoEntry: false })?.isDirectory()) throw new InvalidArgumentError('not a directory');
    return abs;
  })
  .option('--timeout-ms <ms>', 'time limit of one tool call', (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1 || n > 60_000) throw new InvalidArgumentError('a whole number of milliseconds, 1-60000');
    return n;
  }, 5000)
  .parse(process.argv);

async function main(): Promise<void> {
  const { policyRoot, timeoutMs } = program.opts<{ policyRoot: string; timeoutMs: number }>();
  const tools = new PolicyToolsService(policyRoot, new WorkerEvaluator(), { timeoutMs });
  // Both MCP eras on stdio: the connection's opening picks the era; one server serves it.
  // An invalid line is dropped (P5: no response); it is noted on stderr without its content.
  const connection = serveStdio(() => createPolicyMcpServer(tools), {
    onerror: () => process.stderr.write('tollgate-policy-mcp: ignored a line that is not a JSON-RPC message\n'),
  });
  const stop = async () => {
    // Requests already read are answered before the process goes.
    await new Promise((resolve) => setImmediate(resolve));
    await tools.idle();
    await tools.close();
    await connection.close();
    process.exit(0);
  };
  process.stdin.on('end', () => void stop());
  process.on('SIGTERM', () => void stop());
}

main().catch(() => {
  process.stderr.write('tollgate-policy-mcp: failed to start\n');
  process.exit(1);
});
