import { BadGatewayException, Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { CatalogToolChanged, digestOf, money } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { listUpstreamTools, UpstreamError } from '@tollgate/mcp-runtime';
import { DISCOVERY, DISCOVERY_OUTBOX } from '../discovery.constants';
import { type RegisterProviderDto } from './register-provider.dto';

export interface RegisteredTool {
  toolId: string;
  name: string;
  version: number;
  contractHash: string;
}

/**
 * Registers (or re-syncs) a provider: reads its tools/list within the R6
 * limits, stores each tool's contract with its hash (R3), and publishes the
 * catalog change in the same transaction. Contract approval, per-tool prices
 * and scheduled re-sync land with the discovery issue.
 */
@Injectable()
export class RegisterProviderUseCase {
  constructor(
    @InjectDataSource(DISCOVERY) private readonly dataSource: DataSource,
    @Inject(DISCOVERY_OUTBOX) private readonly outbox: OutboxWriter,
  ) {}

  async execute(dto: RegisterProviderDto): Promise<RegisteredTool[]> {
    let tools;
    try {
      tools = await listUpstreamTools({ endpoint: dto.endpoint, deadlineAt: Date.now() + 30_000 });
    } catch (e) {
      throw new BadGatewayException({ code: 'PROVIDER_SYNC_FAILED', message: e instanceof UpstreamError ? e.message : 'tools/list failed' });
    }
    const price = BigInt(dto.priceMinor ?? '0');
    const asset = dto.asset ?? 'USDC';
    return this.dataSource.transaction(async (m) => {
      await m.query(
        `INSERT INTO discovery.provider (provider_id, endpoint, last_synced_at) VALUES ($1, $2, now())
         ON CONFLICT (provider_id) DO UPDATE SET endpoint = EXCLUDED.endpoint, last_synced_at = now()`,
        [dto.providerId, dto.endpoint],
      );
      const registered: RegisteredTool[] = [];
      for (const tool of tools) {
        const contract = { inputSchema: tool.inputSchema, outputSchema: tool.outputSchema ?? null, annotations: tool.annotations ?? null };
        const contractHash = digestOf(contract);
        const binding = { bindingId: `${dto.providerId}:${tool.name}`, providerId: dto.providerId, endpoint: dto.endpoint, upstreamToolName: tool.name };
        const [existing]: { version: number; contract_hash: string }[] = await m.query(
          'SELECT version, contract_hash FROM discovery.catalog_tool WHERE tool_id = $1 FOR UPDATE',
          [tool.name],
        );
        const version = !existing ? 1 : existing.contract_hash === contractHash ? existing.version : existing.version + 1;
        await m.query(
          `INSERT INTO discovery.catalog_tool (tool_id, name, version, contract_hash, description, input_schema, output_schema, annotations, price_minor, asset, bindings)
           VALUES ($1, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
           ON CONFLICT (tool_id) DO UPDATE SET version = EXCLUDED.version, contract_hash = EXCLUDED.contract_hash,
             description = EXCLUDED.description, input_schema = EXCLUDED.input_schema, output_schema = EXCLUDED.output_schema,
             annotations = EXCLUDED.annotations, price_minor = EXCLUDED.price_minor, asset = EXCLUDED.asset,
             bindings = EXCLUDED.bindings, status = 'active', updated_at = now()`,
          [tool.name, version, contractHash, tool.description ?? '', JSON.stringify(tool.inputSchema), contract.outputSchema && JSON.stringify(contract.outputSchema),
            contract.annotations && JSON.stringify(contract.annotations), price.toString(), asset, JSON.stringify([binding])],
        );
        await this.outbox.append(m, CatalogToolChanged, {
          toolId: tool.name, name: tool.name, status: 'active', version, contractHash, description: tool.description ?? '',
          inputSchema: tool.inputSchema as Record<string, unknown>,
          ...(tool.outputSchema ? { outputSchema: tool.outputSchema as Record<string, unknown> } : {}),
          ...(tool.annotations ? { annotations: tool.annotations as Record<string, unknown> } : {}),
          price: money(price, asset), bindings: [binding],
        });
        registered.push({ toolId: tool.name, name: tool.name, version, contractHash });
      }
      return registered;
    });
  }
}
