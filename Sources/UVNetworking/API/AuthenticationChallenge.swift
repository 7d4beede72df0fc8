import HTTPTypes

// The types of AFNetworking's authentication challenge handler. The session stores the handler
// (`SessionManager.authenticationChallengeHandler`) but does not consult it yet: TLS and server
// trust arrive with issue #4, which asks the handler for every challenge and acts on its answer.

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

    public init(host: String, port: Int, scheme: String, realm: String? = nil, authenticationMethod: AuthenticationMethod) {
        self.host = host
        self.port = port
        self.scheme = scheme
        self.realm = realm
        self.authenticationMethod = authenticationMethod
    }
}

/// What answers a challenge, like URLCredential. Today only a user name and password; the
/// server-trust and client-identity forms come with issue #4.
public struct Credential: Hashable, Sendable {
    enum Storage: Hashable, Sendable {
        case password(user: String, password: String)
    }

    let storage: Storage

    /// A user name and password (HTTP Basic or Digest).
    public static func user(_ user: String, password: String) -> Credential {
        Credential(storage: .password(user: user, password: password))
    }

    /// The user name, for a password credential.
    public var user: String? {
        switch storage { case .password(let user, _): return user }
    }

    /// The password, for a password credential.
    public var password: String? {
        switch storage { case .password(_, let password): return password }
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
