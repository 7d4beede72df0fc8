// Generated from Sources/UVNetworking/UVNetworking.docc/GettingStarted.md by scripts/extract-snippets.py: do not edit.
// Change the document's code block, then run `make snippets`.

import Foundation
import UVNetworking

// Sources/UVNetworking/UVNetworking.docc/GettingStarted.md, swift block 5
struct Origin: Decodable, Sendable {
    let origin: String    // httpbin's /ip answers {"origin": "127.0.0.1"}
}

// Sources/UVNetworking/UVNetworking.docc/GettingStarted.md, swift block 1
func getting_started_1() {
    let manager = SessionManager()
    let url = URL(string: "http://127.0.0.1:8080/get")!

    manager.dataTask(with: Request(url: url)) { response, object, error in
        if let error {
            print("failed:", error)
            exit(1)
        }
        print(response!.status, object ?? "no body")
        exit(0)
    }.resume()

    _ = manager
    _ = url
    dispatchMain()    // runs the main queue's handlers; never returns
}

// Sources/UVNetworking/UVNetworking.docc/GettingStarted.md, swift block 2
func getting_started_2() {
    let manager = SessionManager()
    manager.completionQueue = DispatchQueue(label: "handlers")   // not the main queue, which is waiting
    let done = DispatchGroup()

    for path in ["get", "headers", "ip"] {
        done.enter()
        let request = Request(url: URL(string: "http://127.0.0.1:8080/\(path)")!)
        manager.dataTask(with: request) { response, _, error in
            print(path, response?.status.code ?? 0, error.map { "\($0)" } ?? "ok")
            done.leave()
        }.resume()
    }
    done.wait()    // every handler has run
    _ = manager
    _ = done
}

// Sources/UVNetworking/UVNetworking.docc/GettingStarted.md, swift block 3
func getting_started_3() async throws {
    let manager = SessionManager()
    let response = try await manager.data(for: Request(url: URL(string: "http://127.0.0.1:8080/get")!))
    print(response.statusCode, response.value ?? "no body")
    _ = manager
    _ = response
}

// Sources/UVNetworking/UVNetworking.docc/GettingStarted.md, swift block 4
func getting_started_4() async throws {
    let manager = SessionManager()
    let page = try await manager.data(for: Request(url: URL(string: "http://127.0.0.1:8080/html")!),
                                      responseSerializer: HTTPResponseSerializer())   // any body, status checked
    print(page.statusCode, page.data.count)    // `value` is the body as it came, as `Data`
    _ = manager
    _ = page
}

// Sources/UVNetworking/UVNetworking.docc/GettingStarted.md, swift block 6
func getting_started_6() async throws {
    let api = HTTPSessionManager(baseURL: URL(string: "http://127.0.0.1:8080/"))
    let ip = try await api.get("ip", as: Origin.self)    // decoded on the worker pool
    print(ip.origin)
    _ = api
    _ = ip
}

// Sources/UVNetworking/UVNetworking.docc/GettingStarted.md, swift block 7
func getting_started_7() {
    let manager = SessionManager()
    manager.dataTask(with: Request(url: URL(string: "http://127.0.0.1:8080/status/404")!)) { _, _, error in
        guard let error = error as? NetworkingError else { return }
        switch error.kind {
        case .timeout:
            print("timed out:", error.code)
        case .validation:
            print("refused:", error.response?.status.code ?? 0, error.responseData?.count ?? 0, "bytes")
        default:
            print(error.code, error.detail)
        }
    }.resume()
    _ = manager
}

// Sources/UVNetworking/UVNetworking.docc/GettingStarted.md, swift block 8
func getting_started_8() async {
    let manager = SessionManager()
    await manager.shutdown()    // takes no new tasks, waits for running ones, closes connections
    _ = manager
}
