export { addressRange, classifyAddress, type AddressPolicyOptions, type AddressVerdict } from './address-policy';
export {
  checkOutboundUrl, OutboundUrlError, systemResolver,
  type CheckedTarget, type CheckUrlOptions, type HostResolver, type OutboundPolicy, type ResolvedAddress,
} from './check-url';
export {
  GuardedHttpClient, OutboundRequestError,
  type FetchedBody, type GuardedClientOptions, type OpenedBody, type OutboundRequest, type OutboundResponse,
} from './guarded-client';
export { outboundGuardEnv, outboundPolicyFromConfig } from './guard-config';
