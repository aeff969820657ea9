import { Body, Controller, Get, HttpCode, Param, ParseIntPipe, Patch, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { DiscoveryAdminGuard } from '../discovery-admin.guard';
import { UpdateToolDto } from './review-tool.dto';
import { ReviewToolUseCase } from './review-tool.usecase';

@ApiTags('tools')
@ApiBearerAuth()
@Controller('admin/tools')
@UseGuards(DiscoveryAdminGuard)
export class ToolsController {
  constructor(private readonly review: ReviewToolUseCase) {}

  /** The tool with every version (approved, pending, retired) and its bindings. */
  @Get(':toolId')
  get(@Param('toolId') toolId: string) {
    return this.review.get(toolId);
  }

  @Patch(':toolId')
  update(@Param('toolId') toolId: string, @Body() dto: UpdateToolDto) {
    return this.review.update(toolId, dto);
  }

  /** Puts a pending (or retired) contract version in force. */
  @Post(':toolId/versions/:version/approve')
  @HttpCode(200)
  approve(@Param('toolId') toolId: string, @Param('version', ParseIntPipe) version: number) {
    return this.review.approve(toolId, version);
  }
}
