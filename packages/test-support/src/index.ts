export * from "./processes";
export * from "./fake-upstreams/index";
