// The model an app needs (Path, InterfaceDescription, Target and its answers, StatusReply …)
// comes with `import ReachClient`. Of these two modules only that model is `public`; the
// daemon's decisions in them are `package`. docs/client-api.md lists the whole surface.
@_exported import ReachabilityCore
@_exported import ReachProtocol
