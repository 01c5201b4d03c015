"""WeChat official accounts and WeCom apps (wechatpy): see `adapters.wechat.adapter`."""

from adapters.wechat.adapter import CallbackStats, WeChatAdapter, split_bytes

__all__ = ["CallbackStats", "WeChatAdapter", "split_bytes"]
