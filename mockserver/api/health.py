from fastapi import APIRouter

router = APIRouter(tags=["health"])


@router.get("/health")
async def health() -> dict[str, str]:
    """Liveness: answers 200 as soon as the server accepts requests."""
    return {"status": "ok"}
