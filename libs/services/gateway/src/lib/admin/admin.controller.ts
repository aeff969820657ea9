import { Body, Controller, Param, ParseUUIDPipe, Post, UseGuards } from '@nestjs/common';
import { adminTokenGuard } from '@tollgate/http';
import { GATEWAY_OPTIONS } from '../gateway.constants';
import { CreateAgentDto, CreateMcpUrlDto, CreateOwnerDto } from './admin.dto';
import { ManageIdentitiesUseCase } from './manage-identities.usecase';

const GatewayAdminGuard = adminTokenGuard(GATEWAY_OPTIONS);

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

  @Post('agents/:agentId/credentials')
  issueCredential(@Param('agentId', new ParseUUIDPipe()) agentId: string) {
    return this.identities.issueCredential(agentId);
  }

  @Post('mcp-urls')
  createMcpUrl(@Body() dto: CreateMcpUrlDto) {
    return this.identities.createMcpUrl(dto.slug, dto.ownerId);
  }
}
