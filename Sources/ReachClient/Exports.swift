// The types of the API (Path, InterfaceType, Target, StatusReply …) come with `import ReachClient`.
@_exported import ReachabilityCore
@_exported import ReachProtocol
