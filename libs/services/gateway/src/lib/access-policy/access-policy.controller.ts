import { BadRequestException, Body, Controller, NotFoundException, Param, ParseUUIDPipe, Put, UseGuards } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { IsString, MaxLength, MinLength } from 'class-validator';
import { adminTokenGuard } from '@tollgate/http';
import { POLICY_LIMITS } from '@tollgate/policy';
import { Identities } from '../authenticate/identities.repository';
import { GATEWAY } from '../gateway.constants';
import { GATEWAY_OPTIONS } from '../gateway.constants';
import { AccessPolicyService, PolicyRejected, type PolicySubject } from './access-policy.service';

export class PutAccessPolicyDto {
  /** The policy as YAML (dialect "2.0"; see docs/policy-reference.md). */
  @IsString() @MinLength(1) @MaxLength(POLICY_LIMITS.maxPolicyBytes) policy!: string;
}

@ApiTags('access policy')
@ApiBearerAuth()
@Controller('admin')
@UseGuards(adminTokenGuard(GATEWAY_OPTIONS))
export class AccessPolicyController {
  constructor(
    private readonly policies: AccessPolicyService,
    @InjectDataSource(GATEWAY) private readonly dataSource: DataSource,
  ) {}

  /** A new version of the owner's access policy; it applies to every call of the owner's agents from now on. */
  @Put('owners/:ownerId/access-policy')
  async putOwner(@Param('ownerId', new ParseUUIDPipe()) ownerId: string, @Body() dto: PutAccessPolicyDto) {
    if (!(await Identities.ownerExists(this.dataSource, ownerId))) throw new NotFoundException({ code: 'OWNER_NOT_FOUND', message: 'No such owner.' });
    return this.put('owner', ownerId, dto.policy);
  }

  /** A new version of the URL's access policy; it applies on top of the owner's. */
  @Put('mcp-urls/:slug/access-policy')
  async putUrl(@Param('slug') slug: string, @Body() dto: PutAccessPolicyDto) {
    const urlId = await Identities.urlIdOf(this.dataSource, slug);
    if (!urlId) throw new NotFoundException({ code: 'MCP_URL_NOT_FOUND', message: 'No MCP server at this URL' });
    return this.put('url', urlId, dto.policy);
  }

  private async put(subject: PolicySubject, id: string, text: string) {
    try {
      return await this.policies.put(subject, id, text);
    } catch (e) {
      if (e instanceof PolicyRejected) throw new BadRequestException({ code: 'E_POLICY_PARSE', message: e.message });
      throw e;
    }
  }
}
