import { Body, Controller, HttpCode, Param, ParseUUIDPipe, Patch, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { adminTokenGuard } from '@tollgate/http';
import { GATEWAY_OPTIONS } from '../gateway.constants';
import { CreateAgentDto, CreateMcpUrlDto, CreateOwnerDto, McpUrlProfileDto } from './admin.dto';
import { ManageIdentitiesUseCase } from './manage-identities.usecase';

const GatewayAdminGuard = adminTokenGuard(GATEWAY_OPTIONS);

@ApiTags('admin')
@ApiBearerAuth()
@Controller('admin')
@UseGuards(GatewayAdminGuard)
export class AdminController {
  constructor(private readonly identities: ManageIdentitiesUseCase) {}

  @Post('owners')
  createOwner(@Body() dto: CreateOwnerDto) {
    return this.identities.createOwner(dto.name);
  }

  @Post('owners/:ownerId/agents')
  createAgent(@Param('ownerId', new ParseUUIDPipe()) ownerId: string, @Body() dto: CreateAgentDto) {
    return this.identities.createAgent(ownerId, dto.name);
  }

  /** The secret is in this response only; it is stored as a hash. */
  @Post('agents/:agentId/credentials')
  issueCredential(@Param('agentId', new ParseUUIDPipe()) agentId: string) {
    return this.identities.issueCredential(agentId);
  }

  @Post('credentials/:credentialId/revoke')
  @HttpCode(200)
  revokeCredential(@Param('credentialId', new ParseUUIDPipe()) credentialId: string) {
    return this.identities.revokeCredential(credentialId);
  }

  @Post('mcp-urls')
  createMcpUrl(@Body() dto: CreateMcpUrlDto) {
    const { slug, ownerId, ...profile } = dto;
    return this.identities.createMcpUrl(slug, ownerId, profile);
  }

  /** The URL stops answering (MCP_URL_NOT_FOUND) at once, for every credential. */
  @Post('mcp-urls/:slug/disable')
  @HttpCode(200)
  disableMcpUrl(@Param('slug') slug: string) {
    return this.identities.disableMcpUrl(slug);
  }

  @Patch('mcp-urls/:slug')
  updateMcpUrl(@Param('slug') slug: string, @Body() dto: McpUrlProfileDto) {
    return this.identities.updateMcpUrl(slug, dto);
  }
}
