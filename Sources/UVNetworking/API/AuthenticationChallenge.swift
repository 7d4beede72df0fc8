import HTTPTypes

// The types of AFNetworking's authentication challenge handler
// (`SessionManager.authenticationChallengeHandler`). The session raises a `.serverTrust` challenge
// for every TLS handshake that presents certificates; HTTP authentication challenges (401/407)
// are not raised: credentials go in the request (`HTTPRequestSerializer.setAuthorizationHeader`).

/// How a server or proxy asks to be authenticated, like URLAuthenticationMethod.
public struct AuthenticationMethod: RawRepresentable, Hashable, Sendable {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The server's certificate chain is to be evaluated (TLS).
    public static let serverTrust = AuthenticationMethod(rawValue: "ServerTrust")
    /// The server asks for a client certificate (TLS).
    public static let clientCertificate = AuthenticationMethod(rawValue: "ClientCertificate")
    /// HTTP Basic (RFC 7617).
    public static let httpBasic = AuthenticationMethod(rawValue: "HTTPBasic")
    /// HTTP Digest (RFC 7616).
    public static let httpDigest = AuthenticationMethod(rawValue: "HTTPDigest")
    /// Whatever the protocol does by default.
    public static let `default` = AuthenticationMethod(rawValue: "Default")
}

/// The server (host, port, scheme) and method a challenge is about, like URLProtectionSpace.
public struct ProtectionSpace: Hashable, Sendable {
    public var host: String
    public var port: Int
    /// "http" or "https".
    public var scheme: String
    /// The realm of an HTTP authentication challenge, if the server named one.
    public var realm: String?
    public var authenticationMethod: AuthenticationMethod
    /// For `.serverTrust`: the certificates the server presented, to evaluate (for example with
    /// `SecurityPolicy.evaluate(_:forDomain:)`) and answer with `Credential.serverTrust(_:)`.
    public var serverTrust: ServerTrust?

    public init(host: String, port: Int, scheme: String, realm: String? = nil, authenticationMethod: AuthenticationMethod,
                serverTrust: ServerTrust? = nil) {
        self.host = host
        self.port = port
        self.scheme = scheme
        self.realm = realm
        self.authenticationMethod = authenticationMethod
        self.serverTrust = serverTrust
    }
}

/// What answers a challenge, like URLCredential: a user name and password, or the server
/// trust of a `.serverTrust` challenge (accept this server). Client certificates are configured
/// up front (`TLSConfiguration.clientIdentity`), not through challenges.
public struct Credential: Hashable, Sendable {
    enum Storage: Hashable, Sendable {
        case password(user: String, password: String)
        case serverTrust(ServerTrust)
    }

    let storage: Storage

    /// A user name and password (HTTP Basic or Digest).
    public static func user(_ user: String, password: String) -> Credential {
        Credential(storage: .password(user: user, password: password))
    }

    /// Accepts the server whose trust this is, whatever the security policy says (URLCredential(trust:)).
    public static func serverTrust(_ trust: ServerTrust) -> Credential {
        Credential(storage: .serverTrust(trust))
    }

    /// The user name, for a password credential.
    public var user: String? {
        if case .password(let user, _) = storage { return user }
        return nil
    }

    /// The password, for a password credential.
    public var password: String? {
        if case .password(_, let password) = storage { return password }
        return nil
    }

    /// The trust, for a server-trust credential.
    public var serverTrust: ServerTrust? {
        if case .serverTrust(let trust) = storage { return trust }
        return nil
    }
}

/// A challenge from a server, like URLAuthenticationChallenge.
public struct AuthenticationChallenge: Sendable {
    public var protectionSpace: ProtectionSpace
    /// How many times this protection space has been answered wrongly for the task.
    public var previousFailureCount: Int
    /// The credential the session would use if the handler performs default handling.
    public var proposedCredential: Credential?
    /// The response that carried the challenge (a 401 or 407), if it came over HTTP.
    public var failureResponse: HTTPResponse?

    public init(protectionSpace: ProtectionSpace, previousFailureCount: Int = 0, proposedCredential: Credential? = nil,
                failureResponse: HTTPResponse? = nil) {
        self.protectionSpace = protectionSpace
        self.previousFailureCount = previousFailureCount
        self.proposedCredential = proposedCredential
        self.failureResponse = failureResponse
    }
}

/// The answer to a challenge, like AFNetworking's handler result (a disposition, a credential,
/// or an error) and URLSession.AuthChallengeDisposition.
public enum AuthenticationChallengeDisposition: Sendable {
    /// Answer with this credential (nil: continue without one).
    case useCredential(Credential?)
    /// Do what the session would do without a handler.
    case performDefaultHandling
    /// Cancel the task (it completes with `.cancelled`).
    case cancelAuthenticationChallenge
    /// Decline this protection space; the session may try another method.
    case rejectProtectionSpace
    /// Fail the task with this error.
    case fail(any Error & Sendable)
}
