import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { returnedRows } from '@tollgate/persistence';
import { type CatalogToolChangedPayload } from '@tollgate/contracts';
import { PublishToolService } from '../catalog/publish-tool.service';
import { DISCOVERY } from '../discovery.constants';
import { type UpdateToolDto } from './review-tool.dto';

const notFound = () => new NotFoundException({ code: 'TOOL_NOT_FOUND', message: 'No such catalog tool.' });

/** An admin's decisions on a catalog tool: approve a contract version, set listing fields, mark it reviewed. */
@Injectable()
export class ReviewToolUseCase {
  constructor(
    @InjectDataSource(DISCOVERY) private readonly dataSource: DataSource,
    private readonly publisher: PublishToolService,
  ) {}

  async get(toolId: string) {
    return this.dataSource.transaction(async (m) => {
      const state = await this.publisher.load(m, toolId);
      if (!state) throw notFound();
      return state;
    });
  }

  /** R3: the approved version is the one in force; the one it replaces is retired. */
  async approve(toolId: string, version: number): Promise<CatalogToolChangedPayload> {
    return this.dataSource.transaction(async (m) => {
      const [tool]: { current_version: number }[] = await m.query('SELECT current_version FROM discovery.catalog_tool WHERE tool_id = $1 FOR UPDATE', [toolId]);
      if (!tool) throw notFound();
      const [target]: { state: string }[] = await m.query('SELECT state FROM discovery.tool_version WHERE tool_id = $1 AND version = $2', [toolId, version]);
      if (!target) throw new NotFoundException({ code: 'VERSION_NOT_FOUND', message: `Tool ${toolId} has no version ${version}.` });
      if (target.state === 'approved') throw new ConflictException({ code: 'VERSION_ALREADY_APPROVED', message: `Version ${version} is already in force.` });
      await m.query(`UPDATE discovery.tool_version SET state = 'retired', decided_at = now() WHERE tool_id = $1 AND state = 'approved'`, [toolId]);
      await m.query(
        `UPDATE discovery.tool_version SET state = 'approved', decided_at = now(), note = note || ' Approved by an admin.' WHERE tool_id = $1 AND version = $2`,
        [toolId, version],
      );
      await m.query('UPDATE discovery.catalog_tool SET current_version = $2 WHERE tool_id = $1', [toolId, version]);
      return (await this.publisher.publishIfChanged(m, toolId))!;
    });
  }

  async update(toolId: string, dto: UpdateToolDto): Promise<CatalogToolChangedPayload> {
    const { reviewed, ...overrides } = dto;
    return this.dataSource.transaction(async (m) => {
      const rows = returnedRows(await m.query(
        `UPDATE discovery.catalog_tool SET overrides = overrides || $2::jsonb,
           reviewed_at = CASE WHEN $3::boolean IS NULL THEN reviewed_at WHEN $3 THEN now() ELSE NULL END
         WHERE tool_id = $1 RETURNING tool_id`,
        [toolId, JSON.stringify(JSON.parse(JSON.stringify(overrides))), reviewed ?? null],
      ));
      if (rows.length === 0) throw notFound();
      return (await this.publisher.publishIfChanged(m, toolId))!;
    });
  }
}
