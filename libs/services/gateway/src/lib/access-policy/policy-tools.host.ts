import path from 'node:path';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { errorResult, type PolicyToolResult, PolicyToolsService, WorkerEvaluator } from '@tollgate/policy-tools';
import { GATEWAY_OPTIONS } from '../gateway.constants';
import { type GatewayOptions } from '../gateway.options';

/**
 * The self-verification tools (source 001) on the gateway: each owner's agents
 * read policies only from that owner's folder, `<GATEWAY_POLICY_ROOT>/<ownerId>`,
 * fixed by configuration — never from a path an agent names outside it.
 */
@Injectable()
export class PolicyToolsHost implements OnModuleDestroy {
  private readonly evaluator = new WorkerEvaluator();
  private readonly perOwner = new Map<string, PolicyToolsService>();

  constructor(@Inject(GATEWAY_OPTIONS) private readonly options: GatewayOptions) {}

  get enabled(): boolean {
    return this.options.policyRoot !== undefined;
  }

  async call(ownerId: string, tool: string, args: unknown): Promise<PolicyToolResult> {
    if (!this.options.policyRoot) return errorResult('E_INTERNAL', '');
    let svc = this.perOwner.get(ownerId);
    if (!svc) {
      svc = new PolicyToolsService(path.join(this.options.policyRoot, ownerId), this.evaluator, { timeoutMs: this.options.policyTimeoutMs });
      this.perOwner.set(ownerId, svc);
    }
    return svc.call(tool, args);
  }

  async onModuleDestroy(): Promise<void> {
    await this.evaluator.close();
  }
}
