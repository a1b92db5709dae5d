import HTTPTypes
import Hummingbird
import Hush
import Logging
import NIOCore

/// An error answered as `{"error": "...", "field": ...}` with its status.
struct APIError: Error, Sendable {
    var status: HTTPResponse.Status
    var message: String
    var field: String?
    var problems: [String] = []

    init(_ status: HTTPResponse.Status, _ message: String, field: String?, problems: [String] = []) {
        self.status = status
        self.message = message
        self.field = field
        self.problems = problems
    }

    init(_ refusal: ServiceCore.Refusal) {
        switch refusal {
        case .badRequest(let message, let field): self.init(.badRequest, message, field: field)
        case .notFound(let message): self.init(.notFound, message, field: nil)
        case .invalidPolicy(let message, let problems):
            self.init(.unprocessableContent, message, field: "policy", problems: problems)
        case .unavailable(let message): self.init(.serviceUnavailable, message, field: nil)
        }
    }

    var response: Response {
        ServiceAPI.response(status, json: ServiceJSON.error(message, field: field, problems: problems))
    }
}

/// Every error leaves as JSON: the service's refusals with their status, Hummingbird's own
/// (404 for an unknown path, 405, 413) with theirs, anything else as 500 (logged).
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            var response = try await next(request, context)
            if response.status == .notFound, response.headers[.contentType] == nil {
                response = notFound(request)
            }
            return response
        } catch let error as APIError {
            return error.response
        } catch let refusal as ServiceCore.Refusal {
            if case .unavailable = refusal {
                context.logger.error(
                    "state unavailable", metadata: ["path": "\(request.uri.path)", "error": "\(refusal)"])
            }
            return APIError(refusal).response
        } catch let error as HTTPError {
            if error.status == .notFound { return notFound(request) }
            return APIError(error.status, error.body ?? error.status.reasonPhrase, field: nil).response
        } catch let error as any HTTPResponseError {
            return APIError(error.status, error.status.reasonPhrase, field: nil).response
        } catch {
            // The request's own logger carries its id (hb.request.id).
            context.logger.error("request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            return APIError(.internalServerError, "internal error", field: nil).response
        }
    }

    private func notFound(_ request: Request) -> Response {
        let path = request.uri.path
        if let allowed = Self.methods(for: path) {
            var response = APIError(
                .methodNotAllowed,
                "\(request.method) is not allowed on \(path); use \(allowed.joined(separator: ", "))",
                field: nil
            ).response
            response.headers[.allow] = allowed.joined(separator: ", ")
            return response
        }
        return APIError(.notFound, "no such endpoint: \(request.method) \(path)", field: nil).response
    }

    /// The methods an endpoint of the service answers, nil for a path that is none.
    static func methods(for path: String) -> [String]? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        switch parts.count {
        case 2 where parts[1] == "healthz" || parts[1] == "metrics" || parts[1] == "": return ["GET"]
        case 3 where parts[1] == "v1" && parts[2] == "notifications": return ["POST"]
        case 3 where parts[1] == "v1" && parts[2] == "events": return ["GET"]
        case 5 where parts[1] == "v1" && parts[2] == "users" && !parts[3].isEmpty:
            switch parts[4] {
            case "status", "suggestions": return ["GET"]
            case "focus": return ["PUT"]
            case "interactions": return ["POST"]
            case "policy": return ["GET", "PUT", "DELETE"]
            default: return nil
            }
        default: return nil
        }
    }
}

/// Every answer carries `x-request-id` (the client's own when it sent one), which is also in
/// every log line of the request (`hb.request.id`).
struct RequestIDMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var context = context
        let id: String
        if let incoming = request.headers[.requestID], !incoming.isEmpty, incoming.utf8.count <= 128 {
            id = incoming
            context.logger[metadataKey: "hb.request.id"] = .string(incoming)
        } else {
            id = context.id
        }
        var response = try await next(request, context)
        response.headers[.requestID] = id
        return response
    }
}

extension HTTPField.Name {
    static let requestID = Self("x-request-id")!
}
