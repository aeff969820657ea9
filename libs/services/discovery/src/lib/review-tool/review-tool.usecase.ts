import { BadRequestException, ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { type CatalogToolChangedPayload } from '@tollgate/contracts';
import { checkMetered } from '../catalog/metered-listing';
import { PublishToolService } from '../catalog/publish-tool.service';
import { DISCOVERY } from '../discovery.constants';
import { type UpdateToolDto } from './review-tool.dto';
import { ToolReviews } from './tool-reviews.repository';

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
      if (!(await ToolReviews.lockTool(m, toolId))) throw notFound();
      const state = await ToolReviews.versionState(m, toolId, version);
      if (!state) throw new NotFoundException({ code: 'VERSION_NOT_FOUND', message: `Tool ${toolId} has no version ${version}.` });
      if (state === 'approved') throw new ConflictException({ code: 'VERSION_ALREADY_APPROVED', message: `Version ${version} is already in force.` });
      await ToolReviews.approve(m, toolId, version);
      return (await this.publisher.publishIfChanged(m, toolId))!;
    });
  }

  async update(toolId: string, dto: UpdateToolDto): Promise<CatalogToolChangedPayload> {
    const { reviewed, ...overrides } = dto;
    if (overrides.metered) {
      const checked = checkMetered(overrides.metered);
      // The whole change is refused (nothing else changes), naming the field.
      if (!checked.ok) throw new BadRequestException({ code: 'LISTING_INVALID', message: checked.problem });
      overrides.metered = { ...checked.metered };
    }
    return this.dataSource.transaction(async (m) => {
      if (!(await ToolReviews.updateListing(m, toolId, JSON.parse(JSON.stringify(overrides)) as object, reviewed ?? null))) throw notFound();
      return (await this.publisher.publishIfChanged(m, toolId))!;
    });
  }
}
