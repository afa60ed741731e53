import { Instance } from './instance.entity.js';
import { Tenant } from './tenant.entity.js';
import { Client } from './client.entity.js';
import { Resource } from './resource.entity.js';
import { Scope } from './scope.entity.js';
import { ClientResource } from './client-resource.entity.js';
import { ClientPermission } from './client-permission.entity.js';
import { User } from './user.entity.js';
import { UserIdentity } from './user-identity.entity.js';
import { OidcPayload } from './oidc-payload.entity.js';
import { SigningKey } from './signing-key.entity.js';
import { BootstrapMarker } from './bootstrap-marker.entity.js';
import { LoginFailure } from './login-failure.entity.js';
import { Role, RolePermission, UserPermission, UserRole } from './role.entity.js';
import { Group, GroupChild, GroupClosure, GroupMember, GroupRole } from './group.entity.js';
import { OneTimeCode } from './one-time-code.entity.js';
import { SessionDevice } from './session-device.entity.js';
import { TenantAdmin } from './tenant-admin.entity.js';
import { TenantIdentityProvider } from './identity-provider.entity.js';
import { LogStream } from './log-stream.entity.js';
import { InstanceAdmin } from './instance-admin.entity.js';
import { Ticket } from './ticket.entity.js';
import { OtpFailure, OtpSend } from './otp-budget.entity.js';
import { DeliveryOutboxMessage, SignupCounter } from './delivery-outbox.entity.js';
import { MfaFailure, UserAuthenticator, WebauthnChallenge } from './user-authenticator.entity.js';

export * from './audit.js';
export * from './instance.entity.js';
export * from './tenant.entity.js';
export * from './client.entity.js';
export * from './resource.entity.js';
export * from './scope.entity.js';
export * from './client-resource.entity.js';
export * from './client-permission.entity.js';
export * from './user.entity.js';
export * from './user-identity.entity.js';
export * from './oidc-payload.entity.js';
export * from './signing-key.entity.js';
export * from './bootstrap-marker.entity.js';
export * from './login-failure.entity.js';
export * from './role.entity.js';
export * from './group.entity.js';
export * from './one-time-code.entity.js';
export * from './tenant-admin.entity.js';
export * from './identity-provider.entity.js';
export * from './log-stream.entity.js';
export * from './instance-admin.entity.js';
export * from './ticket.entity.js';
export * from './otp-budget.entity.js';
export * from './delivery-outbox.entity.js';
export * from './user-authenticator.entity.js';
export * from './session-device.entity.js';
export * from './mfa-policy.js';

/** Every entity of the identity data model (apps/auth and apps/identity both register all of them). */
export const identityEntities = [
  Instance,
  Tenant,
  Client,
  Resource,
  Scope,
  ClientResource,
  ClientPermission,
  User,
  UserIdentity,
  OidcPayload,
  SigningKey,
  BootstrapMarker,
  LoginFailure,
  Role,
  RolePermission,
  UserPermission,
  UserRole,
  Group,
  GroupMember,
  GroupRole,
  GroupChild,
  GroupClosure,
  OneTimeCode,
  TenantAdmin,
  TenantIdentityProvider,
  LogStream,
  InstanceAdmin,
  Ticket,
  OtpFailure,
  OtpSend,
  DeliveryOutboxMessage,
  SignupCounter,
  UserAuthenticator,
  MfaFailure,
  SessionDevice,
  WebauthnChallenge,
];
