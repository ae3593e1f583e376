// Original file: ../../protos/gateway/billing/v1/billing.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { Balance as _gateway_billing_v1_Balance, Balance__Output as _gateway_billing_v1_Balance__Output } from '../../../gateway/billing/v1/Balance';
import type { GetBalanceRequest as _gateway_billing_v1_GetBalanceRequest, GetBalanceRequest__Output as _gateway_billing_v1_GetBalanceRequest__Output } from '../../../gateway/billing/v1/GetBalanceRequest';
import type { GetKeyUsageRequest as _gateway_billing_v1_GetKeyUsageRequest, GetKeyUsageRequest__Output as _gateway_billing_v1_GetKeyUsageRequest__Output } from '../../../gateway/billing/v1/GetKeyUsageRequest';
import type { GetKeyUsageResponse as _gateway_billing_v1_GetKeyUsageResponse, GetKeyUsageResponse__Output as _gateway_billing_v1_GetKeyUsageResponse__Output } from '../../../gateway/billing/v1/GetKeyUsageResponse';
import type { GetRequestChargesRequest as _gateway_billing_v1_GetRequestChargesRequest, GetRequestChargesRequest__Output as _gateway_billing_v1_GetRequestChargesRequest__Output } from '../../../gateway/billing/v1/GetRequestChargesRequest';
import type { GetRequestChargesResponse as _gateway_billing_v1_GetRequestChargesResponse, GetRequestChargesResponse__Output as _gateway_billing_v1_GetRequestChargesResponse__Output } from '../../../gateway/billing/v1/GetRequestChargesResponse';
import type { PreauthorizeRequest as _gateway_billing_v1_PreauthorizeRequest, PreauthorizeRequest__Output as _gateway_billing_v1_PreauthorizeRequest__Output } from '../../../gateway/billing/v1/PreauthorizeRequest';
import type { PreauthorizeResponse as _gateway_billing_v1_PreauthorizeResponse, PreauthorizeResponse__Output as _gateway_billing_v1_PreauthorizeResponse__Output } from '../../../gateway/billing/v1/PreauthorizeResponse';
import type { ReleaseRequest as _gateway_billing_v1_ReleaseRequest, ReleaseRequest__Output as _gateway_billing_v1_ReleaseRequest__Output } from '../../../gateway/billing/v1/ReleaseRequest';
import type { ReleaseResponse as _gateway_billing_v1_ReleaseResponse, ReleaseResponse__Output as _gateway_billing_v1_ReleaseResponse__Output } from '../../../gateway/billing/v1/ReleaseResponse';
import type { ReserveRequest as _gateway_billing_v1_ReserveRequest, ReserveRequest__Output as _gateway_billing_v1_ReserveRequest__Output } from '../../../gateway/billing/v1/ReserveRequest';
import type { ReserveResponse as _gateway_billing_v1_ReserveResponse, ReserveResponse__Output as _gateway_billing_v1_ReserveResponse__Output } from '../../../gateway/billing/v1/ReserveResponse';

export interface BillingServiceClient extends grpc.Client {
  GetBalance(argument: _gateway_billing_v1_GetBalanceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_Balance__Output>): grpc.ClientUnaryCall;
  GetBalance(argument: _gateway_billing_v1_GetBalanceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gateway_billing_v1_Balance__Output>): grpc.ClientUnaryCall;
  GetBalance(argument: _gateway_billing_v1_GetBalanceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_Balance__Output>): grpc.ClientUnaryCall;
  GetBalance(argument: _gateway_billing_v1_GetBalanceRequest, callback: grpc.requestCallback<_gateway_billing_v1_Balance__Output>): grpc.ClientUnaryCall;
  getBalance(argument: _gateway_billing_v1_GetBalanceRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_Balance__Output>): grpc.ClientUnaryCall;
  getBalance(argument: _gateway_billing_v1_GetBalanceRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gateway_billing_v1_Balance__Output>): grpc.ClientUnaryCall;
  getBalance(argument: _gateway_billing_v1_GetBalanceRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_Balance__Output>): grpc.ClientUnaryCall;
  getBalance(argument: _gateway_billing_v1_GetBalanceRequest, callback: grpc.requestCallback<_gateway_billing_v1_Balance__Output>): grpc.ClientUnaryCall;
  
  /**
   * Spend per key, for key management views.
   */
  GetKeyUsage(argument: _gateway_billing_v1_GetKeyUsageRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_GetKeyUsageResponse__Output>): grpc.ClientUnaryCall;
  GetKeyUsage(argument: _gateway_billing_v1_GetKeyUsageRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gateway_billing_v1_GetKeyUsageResponse__Output>): grpc.ClientUnaryCall;
  GetKeyUsage(argument: _gateway_billing_v1_GetKeyUsageRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_GetKeyUsageResponse__Output>): grpc.ClientUnaryCall;
  GetKeyUsage(argument: _gateway_billing_v1_GetKeyUsageRequest, callback: grpc.requestCallback<_gateway_billing_v1_GetKeyUsageResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Spend per key, for key management views.
   */
  getKeyUsage(argument: _gateway_billing_v1_GetKeyUsageRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_GetKeyUsageResponse__Output>): grpc.ClientUnaryCall;
  getKeyUsage(argument: _gateway_billing_v1_GetKeyUsageRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gateway_billing_v1_GetKeyUsageResponse__Output>): grpc.ClientUnaryCall;
  getKeyUsage(argument: _gateway_billing_v1_GetKeyUsageRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_GetKeyUsageResponse__Output>): grpc.ClientUnaryCall;
  getKeyUsage(argument: _gateway_billing_v1_GetKeyUsageRequest, callback: grpc.requestCallback<_gateway_billing_v1_GetKeyUsageResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * The charges of many calls of one account at once, by platform request id (a batch's lines). A call is
   * listed once its charge has landed on the balance; ids not (yet) billed are left out.
   */
  GetRequestCharges(argument: _gateway_billing_v1_GetRequestChargesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_GetRequestChargesResponse__Output>): grpc.ClientUnaryCall;
  GetRequestCharges(argument: _gateway_billing_v1_GetRequestChargesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gateway_billing_v1_GetRequestChargesResponse__Output>): grpc.ClientUnaryCall;
  GetRequestCharges(argument: _gateway_billing_v1_GetRequestChargesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_GetRequestChargesResponse__Output>): grpc.ClientUnaryCall;
  GetRequestCharges(argument: _gateway_billing_v1_GetRequestChargesRequest, callback: grpc.requestCallback<_gateway_billing_v1_GetRequestChargesResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The charges of many calls of one account at once, by platform request id (a batch's lines). A call is
   * listed once its charge has landed on the balance; ids not (yet) billed are left out.
   */
  getRequestCharges(argument: _gateway_billing_v1_GetRequestChargesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_GetRequestChargesResponse__Output>): grpc.ClientUnaryCall;
  getRequestCharges(argument: _gateway_billing_v1_GetRequestChargesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gateway_billing_v1_GetRequestChargesResponse__Output>): grpc.ClientUnaryCall;
  getRequestCharges(argument: _gateway_billing_v1_GetRequestChargesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_GetRequestChargesResponse__Output>): grpc.ClientUnaryCall;
  getRequestCharges(argument: _gateway_billing_v1_GetRequestChargesRequest, callback: grpc.requestCallback<_gateway_billing_v1_GetRequestChargesResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Checks that the account can spend (wallet + credit > 0) and the key is under its limit.
   * Refusal is FAILED_PRECONDITION carrying the 402 error.
   */
  Preauthorize(argument: _gateway_billing_v1_PreauthorizeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_PreauthorizeResponse__Output>): grpc.ClientUnaryCall;
  Preauthorize(argument: _gateway_billing_v1_PreauthorizeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gateway_billing_v1_PreauthorizeResponse__Output>): grpc.ClientUnaryCall;
  Preauthorize(argument: _gateway_billing_v1_PreauthorizeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_PreauthorizeResponse__Output>): grpc.ClientUnaryCall;
  Preauthorize(argument: _gateway_billing_v1_PreauthorizeRequest, callback: grpc.requestCallback<_gateway_billing_v1_PreauthorizeResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Checks that the account can spend (wallet + credit > 0) and the key is under its limit.
   * Refusal is FAILED_PRECONDITION carrying the 402 error.
   */
  preauthorize(argument: _gateway_billing_v1_PreauthorizeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_PreauthorizeResponse__Output>): grpc.ClientUnaryCall;
  preauthorize(argument: _gateway_billing_v1_PreauthorizeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gateway_billing_v1_PreauthorizeResponse__Output>): grpc.ClientUnaryCall;
  preauthorize(argument: _gateway_billing_v1_PreauthorizeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_PreauthorizeResponse__Output>): grpc.ClientUnaryCall;
  preauthorize(argument: _gateway_billing_v1_PreauthorizeRequest, callback: grpc.requestCallback<_gateway_billing_v1_PreauthorizeResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Drops the hold of a call that ended without usage (nothing billed), or retires a spend grant. Releasing
   * an absent hold is a no-op.
   */
  Release(argument: _gateway_billing_v1_ReleaseRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  Release(argument: _gateway_billing_v1_ReleaseRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gateway_billing_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  Release(argument: _gateway_billing_v1_ReleaseRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  Release(argument: _gateway_billing_v1_ReleaseRequest, callback: grpc.requestCallback<_gateway_billing_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Drops the hold of a call that ended without usage (nothing billed), or retires a spend grant. Releasing
   * an absent hold is a no-op.
   */
  release(argument: _gateway_billing_v1_ReleaseRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  release(argument: _gateway_billing_v1_ReleaseRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gateway_billing_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  release(argument: _gateway_billing_v1_ReleaseRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  release(argument: _gateway_billing_v1_ReleaseRequest, callback: grpc.requestCallback<_gateway_billing_v1_ReleaseResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Holds a call's worst-case cost against the account's spendable balance and the key's remaining limit,
   * in one atomic step, before the provider is called. Idempotent per request_id. The usage event of that
   * request_id settles the hold to the real charge. Refusal is FAILED_PRECONDITION carrying the 402 error
   * (insufficient_balance or key_limit_exceeded).
   * With grant_micros, the hold is a spend grant: one hold (under request_id, the grant's id) that the caller
   * spends many calls against without asking again; each call's usage event names the grant (hold_id) and
   * its share (hold_micros), and its posting settles that share.
   */
  Reserve(argument: _gateway_billing_v1_ReserveRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_ReserveResponse__Output>): grpc.ClientUnaryCall;
  Reserve(argument: _gateway_billing_v1_ReserveRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gateway_billing_v1_ReserveResponse__Output>): grpc.ClientUnaryCall;
  Reserve(argument: _gateway_billing_v1_ReserveRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_ReserveResponse__Output>): grpc.ClientUnaryCall;
  Reserve(argument: _gateway_billing_v1_ReserveRequest, callback: grpc.requestCallback<_gateway_billing_v1_ReserveResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Holds a call's worst-case cost against the account's spendable balance and the key's remaining limit,
   * in one atomic step, before the provider is called. Idempotent per request_id. The usage event of that
   * request_id settles the hold to the real charge. Refusal is FAILED_PRECONDITION carrying the 402 error
   * (insufficient_balance or key_limit_exceeded).
   * With grant_micros, the hold is a spend grant: one hold (under request_id, the grant's id) that the caller
   * spends many calls against without asking again; each call's usage event names the grant (hold_id) and
   * its share (hold_micros), and its posting settles that share.
   */
  reserve(argument: _gateway_billing_v1_ReserveRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_ReserveResponse__Output>): grpc.ClientUnaryCall;
  reserve(argument: _gateway_billing_v1_ReserveRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_gateway_billing_v1_ReserveResponse__Output>): grpc.ClientUnaryCall;
  reserve(argument: _gateway_billing_v1_ReserveRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_gateway_billing_v1_ReserveResponse__Output>): grpc.ClientUnaryCall;
  reserve(argument: _gateway_billing_v1_ReserveRequest, callback: grpc.requestCallback<_gateway_billing_v1_ReserveResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface BillingServiceHandlers extends grpc.UntypedServiceImplementation {
  GetBalance: grpc.handleUnaryCall<_gateway_billing_v1_GetBalanceRequest__Output, _gateway_billing_v1_Balance>;
  
  /**
   * Spend per key, for key management views.
   */
  GetKeyUsage: grpc.handleUnaryCall<_gateway_billing_v1_GetKeyUsageRequest__Output, _gateway_billing_v1_GetKeyUsageResponse>;
  
  /**
   * The charges of many calls of one account at once, by platform request id (a batch's lines). A call is
   * listed once its charge has landed on the balance; ids not (yet) billed are left out.
   */
  GetRequestCharges: grpc.handleUnaryCall<_gateway_billing_v1_GetRequestChargesRequest__Output, _gateway_billing_v1_GetRequestChargesResponse>;
  
  /**
   * Checks that the account can spend (wallet + credit > 0) and the key is under its limit.
   * Refusal is FAILED_PRECONDITION carrying the 402 error.
   */
  Preauthorize: grpc.handleUnaryCall<_gateway_billing_v1_PreauthorizeRequest__Output, _gateway_billing_v1_PreauthorizeResponse>;
  
  /**
   * Drops the hold of a call that ended without usage (nothing billed), or retires a spend grant. Releasing
   * an absent hold is a no-op.
   */
  Release: grpc.handleUnaryCall<_gateway_billing_v1_ReleaseRequest__Output, _gateway_billing_v1_ReleaseResponse>;
  
  /**
   * Holds a call's worst-case cost against the account's spendable balance and the key's remaining limit,
   * in one atomic step, before the provider is called. Idempotent per request_id. The usage event of that
   * request_id settles the hold to the real charge. Refusal is FAILED_PRECONDITION carrying the 402 error
   * (insufficient_balance or key_limit_exceeded).
   * With grant_micros, the hold is a spend grant: one hold (under request_id, the grant's id) that the caller
   * spends many calls against without asking again; each call's usage event names the grant (hold_id) and
   * its share (hold_micros), and its posting settles that share.
   */
  Reserve: grpc.handleUnaryCall<_gateway_billing_v1_ReserveRequest__Output, _gateway_billing_v1_ReserveResponse>;
  
}

export interface BillingServiceDefinition extends grpc.ServiceDefinition {
  GetBalance: MethodDefinition<_gateway_billing_v1_GetBalanceRequest, _gateway_billing_v1_Balance, _gateway_billing_v1_GetBalanceRequest__Output, _gateway_billing_v1_Balance__Output>
  GetKeyUsage: MethodDefinition<_gateway_billing_v1_GetKeyUsageRequest, _gateway_billing_v1_GetKeyUsageResponse, _gateway_billing_v1_GetKeyUsageRequest__Output, _gateway_billing_v1_GetKeyUsageResponse__Output>
  GetRequestCharges: MethodDefinition<_gateway_billing_v1_GetRequestChargesRequest, _gateway_billing_v1_GetRequestChargesResponse, _gateway_billing_v1_GetRequestChargesRequest__Output, _gateway_billing_v1_GetRequestChargesResponse__Output>
  Preauthorize: MethodDefinition<_gateway_billing_v1_PreauthorizeRequest, _gateway_billing_v1_PreauthorizeResponse, _gateway_billing_v1_PreauthorizeRequest__Output, _gateway_billing_v1_PreauthorizeResponse__Output>
  Release: MethodDefinition<_gateway_billing_v1_ReleaseRequest, _gateway_billing_v1_ReleaseResponse, _gateway_billing_v1_ReleaseRequest__Output, _gateway_billing_v1_ReleaseResponse__Output>
  Reserve: MethodDefinition<_gateway_billing_v1_ReserveRequest, _gateway_billing_v1_ReserveResponse, _gateway_billing_v1_ReserveRequest__Output, _gateway_billing_v1_ReserveResponse__Output>
}
