/// The standard `org.varlink.service` interface every Varlink service implements.
package enum VarlinkService {
    /// The interface name.
    package static let name = "org.varlink.service"

    /// Fully qualified method names.
    package enum Method {
        /// `GetInfo() -> (vendor, product, version, url, interfaces)`.
        package static let getInfo = "org.varlink.service.GetInfo"
        /// `GetInterfaceDescription(interface) -> (description)`.
        package static let getInterfaceDescription = "org.varlink.service.GetInterfaceDescription"
    }

    /// The standard interface's own IDL, served for `GetInterfaceDescription("org.varlink.service")`.
    package static let idl = """
        # The Varlink Service Interface is provided by every varlink service. It
        # describes the service and the interfaces it implements.
        interface org.varlink.service

        # Get a list of all the interfaces a service provides and information
        # about the implementation.
        method GetInfo() -> (
          vendor: string,
          product: string,
          version: string,
          url: string,
          interfaces: []string
        )

        # Get the description of an interface that is implemented by this service.
        method GetInterfaceDescription(interface: string) -> (description: string)

        # The requested interface was not found.
        error InterfaceNotFound (interface: string)

        # The requested method was not found
        error MethodNotFound (method: string)

        # The interface defines the requested method, but the service does not
        # implement it.
        error MethodNotImplemented (method: string)

        # One of the passed parameters is invalid.
        error InvalidParameter (parameter: string)

        # Client is denied access
        error PermissionDenied ()

        # Method is expected to be called with 'more' set to true, but wasn't
        error ExpectedMore ()

        """
}

/// Reply of `org.varlink.service.GetInfo`.
public struct ServiceInfo: Codable, Sendable, Hashable {
    /// Who makes the service.
    public var vendor: String
    /// The service's name.
    public var product: String
    /// The service's version.
    public var version: String
    /// Where to learn more.
    public var url: String
    /// The interfaces the service implements.
    public var interfaces: [String]

    /// Creates service information.
    public init(vendor: String, product: String, version: String, url: String, interfaces: [String]) {
        self.vendor = vendor
        self.product = product
        self.version = version
        self.url = url
        self.interfaces = interfaces
    }

    /// reachd's own information.
    package static let reachd = ServiceInfo(
        vendor: "reachd",
        product: "reachd",
        version: ReachdVersion.string,
        url: "https://github.com/reachd/reachd",
        interfaces: [VarlinkService.name, ReachabilityInterface.name, SystemdServiceInterface.name]
    )
}

/// Reply of `org.varlink.service.GetInterfaceDescription`.
package struct InterfaceDescriptionReply: Codable, Sendable, Hashable {
    /// The IDL text.
    package var description: String

    /// Creates the reply.
    package init(description: String) {
        self.description = description
    }
}
