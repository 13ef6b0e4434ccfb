export * from "./connection";
export * from "./ferretdb";
export * from "./outage";
export * from "./id-chain";
