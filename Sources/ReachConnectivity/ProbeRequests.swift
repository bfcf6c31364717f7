import NIOCore
import ReachabilityCore
import ReachConfiguration

/// The requests of one probe round, sent at once through one `HTTPFetcher`: the HTTP check,
/// the HTTPS check (through `probeTLS`) and the network's RFC 8908 API (through `apiTLS`),
/// those there are.
struct ProbeRequests {
    /// What came back; nil for a request not sent.
    struct Answers {
        /// The HTTP check's.
        var http: HTTPFetcher.Result?
        /// The HTTPS check's.
        var https: HTTPFetcher.Result?
        /// The RFC 8908 API's.
        var api: HTTPFetcher.Result?
    }

    /// Sends every request, within its caps.
    let fetcher: HTTPFetcher
    /// Checks the HTTPS check's server.
    let probeTLS: (any TLSHandshaking)?
    /// Checks the API's server.
    let apiTLS: (any TLSHandshaking)?

    /// Sends `probe`'s checks and, when there is one, the `api` request on `key`'s interface;
    /// `cancellation` ends them all.
    func send(_ probe: ReachdConfiguration.Probe, api: HTTPEndpoint?, for key: ProbeKey, hasNameserver: Bool,
              cancellation: FetchCancellation, on eventLoop: any EventLoop) -> EventLoopFuture<Answers> {
        let timeout = TimeAmount(probe.timeout)
        func check(_ endpoint: HTTPEndpoint?, tls: (any TLSHandshaking)?) -> EventLoopFuture<HTTPFetcher.Result?> {
            guard let endpoint else { return eventLoop.makeSucceededFuture(nil) }
            let request = HTTPFetcher.Request(endpoint: endpoint, interfaceIndex: key.interfaceIndex, family: key.family,
                                              timeout: timeout, tls: endpoint.isHTTPS ? tls : nil, cancellation: cancellation)
            return fetcher.fetch(request, hasNameserver: hasNameserver).map { $0 }
        }
        let http = check(probe.url, tls: nil)
        let https = check(probe.httpsURL, tls: probeTLS)
        let apiAnswer: EventLoopFuture<HTTPFetcher.Result?> = api.map { endpoint in
            let request = HTTPFetcher.Request(endpoint: endpoint, interfaceIndex: key.interfaceIndex, family: nil,
                                              timeout: .seconds(5), accept: CaptivePortalAPI.mediaType, tls: apiTLS,
                                              cancellation: cancellation)
            return fetcher.fetch(request, hasNameserver: hasNameserver).map { $0 }
        } ?? eventLoop.makeSucceededFuture(nil)
        return http.and(https).and(apiAnswer).map { checks, api in Answers(http: checks.0, https: checks.1, api: api) }
    }
}
