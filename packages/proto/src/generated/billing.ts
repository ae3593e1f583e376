import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { Balance as _gateway_billing_v1_Balance, Balance__Output as _gateway_billing_v1_Balance__Output } from './gateway/billing/v1/Balance';
import type { BillingServiceClient as _gateway_billing_v1_BillingServiceClient, BillingServiceDefinition as _gateway_billing_v1_BillingServiceDefinition } from './gateway/billing/v1/BillingService';
import type { GetBalanceRequest as _gateway_billing_v1_GetBalanceRequest, GetBalanceRequest__Output as _gateway_billing_v1_GetBalanceRequest__Output } from './gateway/billing/v1/GetBalanceRequest';
import type { GetKeyUsageRequest as _gateway_billing_v1_GetKeyUsageRequest, GetKeyUsageRequest__Output as _gateway_billing_v1_GetKeyUsageRequest__Output } from './gateway/billing/v1/GetKeyUsageRequest';
import type { GetKeyUsageResponse as _gateway_billing_v1_GetKeyUsageResponse, GetKeyUsageResponse__Output as _gateway_billing_v1_GetKeyUsageResponse__Output } from './gateway/billing/v1/GetKeyUsageResponse';
import type { GetRequestChargesRequest as _gateway_billing_v1_GetRequestChargesRequest, GetRequestChargesRequest__Output as _gateway_billing_v1_GetRequestChargesRequest__Output } from './gateway/billing/v1/GetRequestChargesRequest';
import type { GetRequestChargesResponse as _gateway_billing_v1_GetRequestChargesResponse, GetRequestChargesResponse__Output as _gateway_billing_v1_GetRequestChargesResponse__Output } from './gateway/billing/v1/GetRequestChargesResponse';
import type { KeyUsage as _gateway_billing_v1_KeyUsage, KeyUsage__Output as _gateway_billing_v1_KeyUsage__Output } from './gateway/billing/v1/KeyUsage';
import type { PreauthorizeRequest as _gateway_billing_v1_PreauthorizeRequest, PreauthorizeRequest__Output as _gateway_billing_v1_PreauthorizeRequest__Output } from './gateway/billing/v1/PreauthorizeRequest';
import type { PreauthorizeResponse as _gateway_billing_v1_PreauthorizeResponse, PreauthorizeResponse__Output as _gateway_billing_v1_PreauthorizeResponse__Output } from './gateway/billing/v1/PreauthorizeResponse';
import type { ReleaseRequest as _gateway_billing_v1_ReleaseRequest, ReleaseRequest__Output as _gateway_billing_v1_ReleaseRequest__Output } from './gateway/billing/v1/ReleaseRequest';
import type { ReleaseResponse as _gateway_billing_v1_ReleaseResponse, ReleaseResponse__Output as _gateway_billing_v1_ReleaseResponse__Output } from './gateway/billing/v1/ReleaseResponse';
import type { RequestCharge as _gateway_billing_v1_RequestCharge, RequestCharge__Output as _gateway_billing_v1_RequestCharge__Output } from './gateway/billing/v1/RequestCharge';
import type { ReserveRequest as _gateway_billing_v1_ReserveRequest, ReserveRequest__Output as _gateway_billing_v1_ReserveRequest__Output } from './gateway/billing/v1/ReserveRequest';
import type { ReserveResponse as _gateway_billing_v1_ReserveResponse, ReserveResponse__Output as _gateway_billing_v1_ReserveResponse__Output } from './gateway/billing/v1/ReserveResponse';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  gateway: {
    billing: {
      v1: {
        Balance: MessageTypeDefinition<_gateway_billing_v1_Balance, _gateway_billing_v1_Balance__Output>
        BillingService: SubtypeConstructor<typeof grpc.Client, _gateway_billing_v1_BillingServiceClient> & { service: _gateway_billing_v1_BillingServiceDefinition }
        GetBalanceRequest: MessageTypeDefinition<_gateway_billing_v1_GetBalanceRequest, _gateway_billing_v1_GetBalanceRequest__Output>
        GetKeyUsageRequest: MessageTypeDefinition<_gateway_billing_v1_GetKeyUsageRequest, _gateway_billing_v1_GetKeyUsageRequest__Output>
        GetKeyUsageResponse: MessageTypeDefinition<_gateway_billing_v1_GetKeyUsageResponse, _gateway_billing_v1_GetKeyUsageResponse__Output>
        GetRequestChargesRequest: MessageTypeDefinition<_gateway_billing_v1_GetRequestChargesRequest, _gateway_billing_v1_GetRequestChargesRequest__Output>
        GetRequestChargesResponse: MessageTypeDefinition<_gateway_billing_v1_GetRequestChargesResponse, _gateway_billing_v1_GetRequestChargesResponse__Output>
        KeyUsage: MessageTypeDefinition<_gateway_billing_v1_KeyUsage, _gateway_billing_v1_KeyUsage__Output>
        PreauthorizeRequest: MessageTypeDefinition<_gateway_billing_v1_PreauthorizeRequest, _gateway_billing_v1_PreauthorizeRequest__Output>
        PreauthorizeResponse: MessageTypeDefinition<_gateway_billing_v1_PreauthorizeResponse, _gateway_billing_v1_PreauthorizeResponse__Output>
        ReleaseRequest: MessageTypeDefinition<_gateway_billing_v1_ReleaseRequest, _gateway_billing_v1_ReleaseRequest__Output>
        ReleaseResponse: MessageTypeDefinition<_gateway_billing_v1_ReleaseResponse, _gateway_billing_v1_ReleaseResponse__Output>
        RequestCharge: MessageTypeDefinition<_gateway_billing_v1_RequestCharge, _gateway_billing_v1_RequestCharge__Output>
        ReserveRequest: MessageTypeDefinition<_gateway_billing_v1_ReserveRequest, _gateway_billing_v1_ReserveRequest__Output>
        ReserveResponse: MessageTypeDefinition<_gateway_billing_v1_ReserveResponse, _gateway_billing_v1_ReserveResponse__Output>
      }
    }
  }
}

