import Foundation

/// Decides whether to trust a server's chain: the manager's authentication challenge handler
/// first, when it has one, then the security policy. Runs on a worker thread, never the loop's:
/// chain verification costs public-key operations, and the handler is the caller's code.
enum ServerTrustEvaluation {
    typealias Handler = @Sendable (SessionTask, AuthenticationChallenge) -> AuthenticationChallengeDisposition

    static func decide(_ trust: ServerTrust, policy: SecurityPolicy, port: Int, task: SessionTask?,
                       handler: Handler?) -> TrustVerdict {
        if let handler, let task {
            let space = ProtectionSpace(host: trust.host, port: port, scheme: "https",
                                        authenticationMethod: .serverTrust, serverTrust: trust)
            switch handler(task, AuthenticationChallenge(protectionSpace: space)) {
            case .performDefaultHandling:
                break
            case .useCredential(let credential):
                // Only this challenge's own trust accepts the server; anything else (a password,
                // nil) leaves the decision to the policy, as URLSession does.
                if let accepted = credential?.serverTrust, accepted === trust {
                    let evaluation = policy.evaluation(of: trust, forDomain: trust.host)
                    return .trusted(verifiedChain: evaluation.verifiedChain.isEmpty ? trust.certificates : evaluation.verifiedChain)
                }
            case .cancelAuthenticationChallenge:
                return .untrusted(.challengeCancelled(host: trust.host))
            case .rejectProtectionSpace:
                return .untrusted(.untrusted(trust, port: port, reason: "the authentication challenge handler rejected it", cause: nil))
            case .fail(let error):
                return .untrusted(.untrusted(trust, port: port, reason: "the authentication challenge handler failed it: \(error)",
                                             cause: error))
            }
        }
        let evaluation = policy.evaluation(of: trust, forDomain: trust.host)
        guard evaluation.isTrusted else {
            return .untrusted(.untrusted(trust, port: port, reason: evaluation.failureReason ?? "the security policy refused it",
                                         cause: nil))
        }
        return .trusted(verifiedChain: evaluation.verifiedChain)
    }
}
